// An agent run (docs/design.md §6): every trajectory of the config (definition × prompt tag × index, or in
// a repair run seed × prompt tag) driven by a pool of `concurrency` threads, so the model calls of
// some overlap the GPU evaluations of others; everything stored in the run store as it happens;
// the run folder exported at the end. Every preflight runs before the run is stored (run_preflight.h);
// a run ends finished, or failed with the reason stored; a process that dies leaves it crashed.
#pragma once

#include <string>
#include <vector>

#include "agent/run_config.h"
#include "common/fs.h"

namespace ptxbench {

struct AgentRunSetup {
  fs::path root;                      ///< data root (definitions, knowledge, fixtures)
  std::string store;                  ///< run store file
  fs::path runs_dir;                  ///< export folder: runs_dir/<run-id>/...
  fs::path ptxbench;                  ///< the ptxbench binary, for "service": "local"
  std::vector<std::string> local_service_args;  ///< extra `serve` options ("--fake-gpus", "2" in tests)
  bool tty = false;                   ///< progress display style
};

struct AgentRunResult {
  std::string run_id;
  int trajectories = 0;
  int failed = 0;      ///< ended as failed (model API gave up, no answer): `--resume` retries them
  int unfinished = 0;  ///< still running (an error of ours or the service's stopped them)
  std::string failure;  ///< why the run is stored as failed ("" when it finished)
  bool fake_evaluation = false;  ///< its verdicts came from a fake backend (no GPU measured them)
  [[nodiscard]] bool complete() const { return failed == 0 && unfinished == 0; }
};

/// A new run of `config`; its notes are run_notes(config) (the name and the repair conditions).
/// The preflight comes first and stores nothing when it fails: InputError for a bad config or a
/// missing API key, EnvironmentError for an endpoint or service that cannot be reached. The run
/// ends finished, or failed with its reason (some trajectory failed or is unfinished: see the
/// result). An error that stops the whole run (InfraErrorPersists, a store error) stores it as
/// failed with that error, then propagates.
AgentRunResult start_run(const RunConfig& config, const AgentRunSetup& setup);
/// Continues a stored run with its stored config: failed trajectories are reopened, every
/// trajectory resumes from its resume point. Refused before the preflight for an unknown or
/// imported run (InputError) and for a run another live process holds (RunHeldError); a failed,
/// crashed, interrupted or finished run is taken over (RunStore::claim_run) once the preflight
/// passed.
AgentRunResult resume_run(const std::string& run_id, const AgentRunSetup& setup);

}  // namespace ptxbench

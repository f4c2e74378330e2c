// Everything a run needs before its first step, checked before anything is stored: the config's
// definitions, workload, prompt tags, evaluation options and notes store (all local), then what
// lies outside this process — the model's API key and endpoint, the evaluation service and the
// definitions it serves. A run whose preflight fails leaves no trace in the run store.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "notes/notes_store.h"
#include "agent/agent_run.h"
#include "agent/evaluation_client.h"
#include "agent/policy.h"
#include "agent/run_config.h"
#include "agent/run_control.h"
#include "definitions/catalog.h"
#include "prompt/prompt_builder.h"
#include "service/local_service.h"
#include "service/service_client.h"

namespace ptxbench {

/// What the trajectories of a run share. Filled in two steps: check_run_config (local), then
/// connect_run (outside); dry_run swaps the second for fakes.
struct RunTools {
  std::optional<Catalog> catalog;
  std::optional<PromptBuilder> prompts;
  std::vector<std::string> tags;       ///< the config's prompt tags, or the builder's defaults
  std::unique_ptr<NotesStore> notes;   ///< repair_notes on: opened once, shared, only read
  std::unique_ptr<Policy> policy;      ///< throttled to model_concurrency
  std::unique_ptr<LocalService> local; ///< "service": "local"
  std::unique_ptr<ServiceClient> service;
  std::unique_ptr<EvaluationClient> evaluation;
  RunControl control;
};

/// Every definition, workload, prompt tag (each prompt is built once) and evaluation option
/// (checked the way the service will check them) must exist, and the notes store must open:
/// InputError otherwise. Nothing outside this process is touched.
void check_run_config(RunTools& tools, const RunConfig& config, const fs::path& root);

/// The preflight that reaches out, in order: the model's API key (InputError, exit 2, naming the
/// variable), its endpoint (probe_model_endpoint: EnvironmentError, exit 3), the evaluation service
/// (a local one is started) and the definitions it serves (EnvironmentError, exit 3; a refused
/// token is AccessDenied). Makes the policy (its model client's retries become notices on
/// tools.control) and the evaluation client.
void connect_run(RunTools& tools, const RunConfig& config, const AgentRunSetup& setup);

/// Whether `serve` options make fake GPUs (--fake-gpus N, N > 0).
bool fake_gpus_in(const std::vector<std::string>& serve_args);

/// The trajectories of the config, in the order they are run: definition × tag × index, or in a
/// repair run tag × seed.
std::vector<TrajectoryKey> trajectory_keys(const RunConfig& config, const std::vector<std::string>& tags);

}  // namespace ptxbench

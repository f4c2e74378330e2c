#include "agent/agent_run.h"

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "agent/progress.h"
#include "agent/run_preflight.h"
#include "runs/run_store.h"
#include "runs/trajectory_export.h"
#include "agent/turn_loop.h"
#include "common/error.h"

namespace ptxbench {
namespace {

// Why a run that did not complete is stored as failed: the error that stopped it, else what became
// of its trajectories.
std::string failure_reason(RunStore& store, const std::vector<int64_t>& ids, const std::string& stop_reason,
                           const std::string& first_error) {
  if (!stop_reason.empty()) return stop_reason;
  int failed = 0, unfinished = 0;
  std::string first_failed;
  for (int64_t id : ids) {
    TrajectoryInfo t = store.trajectory(id);
    if (t.status == TrajectoryStatus::failed) {
      if (failed++ == 0) first_failed = trajectory_label(t.key) + ": " + t.stop_reason;
    } else if (t.status == TrajectoryStatus::running) {
      ++unfinished;
    }
  }
  std::string out;
  if (failed > 0) out = fmt::format("{} of {} trajectories failed (first: {})", failed, ids.size(), first_failed);
  if (unfinished > 0)
    out += fmt::format("{}{} of {} trajectories unfinished{}", out.empty() ? "" : "; ", unfinished, ids.size(),
                       first_error.empty() ? "" : " (first error: " + first_error + ")");
  return out;
}

AgentRunResult execute(RunStore& store, const std::string& run_id, const RunConfig& c, RunTools& tools,
                       const AgentRunSetup& setup, bool resuming) {
  std::vector<int64_t> ids;
  std::map<int64_t, std::string> labels;
  for (const TrajectoryKey& key : trajectory_keys(c, tools.tags)) {
    int64_t id = store.ensure_trajectory(run_id, key);
    if (resuming && store.trajectory(id).status == TrajectoryStatus::failed) store.reopen_trajectory(id);
    ids.push_back(id);
    labels[id] = trajectory_label(key);
  }
  ProgressDisplay progress(labels, setup.tty, stdout, tools.evaluation->fake());
  tools.control.set_notice_sink([&progress](const std::string& line) { progress.notice(line); });
  struct SinkReset {  // the display goes out of scope with this function, however it is left
    RunControl& control;
    ~SinkReset() { control.set_notice_sink({}); }
  } sink_reset{tools.control};
  std::atomic<std::size_t> next{0};
  std::mutex errors_mutex;
  std::string first_error;
  auto worker = [&] {
    TrajectoryRunner runner(store, *tools.policy, *tools.evaluation, c, *tools.catalog, *tools.prompts, run_id,
                            tools.notes.get(), &tools.control);
    for (std::size_t i = next++; i < ids.size() && !tools.control.stopped(); i = next++) {
      try {
        runner.run(ids[i], [&](const TurnEvent& e) { progress.on_event(e); });
      } catch (const InfraErrorPersists& e) {
        tools.control.fail(e.what());  // the others stop after the step in hand
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(errors_mutex);
        if (first_error.empty()) first_error = e.what();
        tools.control.notice(fmt::format("{} {} stopped (resume with `ptxbench run --resume {}`): {}", progress.prefix(),
                                         labels[ids[i]], run_id, e.what()));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < std::min<int>(c.concurrency, static_cast<int>(ids.size())); ++k) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  progress.finish();

  AgentRunResult r;
  r.run_id = run_id;
  r.trajectories = static_cast<int>(ids.size());
  r.fake_evaluation = progress.fake();
  for (int64_t id : ids) {
    TrajectoryStatus s = store.trajectory(id).status;
    if (s == TrajectoryStatus::failed) ++r.failed;
    if (s == TrajectoryStatus::running) ++r.unfinished;
  }
  if (!r.complete() || tools.control.stopped()) r.failure = failure_reason(store, ids, tools.control.reason(), first_error);
  store.set_run_status(run_id, r.failure.empty() ? RunStatus::finished : RunStatus::failed, r.failure);
  export_run(store, run_id, setup.runs_dir);
  if (tools.control.stopped())
    throw InfraErrorPersists("run", "run " + run_id + " failed: " + tools.control.reason() +
                                        "; `ptxbench run --resume " + run_id + "` continues it");
  return r;
}

// An error that escapes the run (InfraErrorPersists, a store or export failure) leaves it failed
// with that error as its reason, not `running` for a process that is about to exit.
AgentRunResult execute_or_fail(RunStore& store, const std::string& run_id, const RunConfig& c, RunTools& tools,
                               const AgentRunSetup& setup, bool resuming) {
  try {
    return execute(store, run_id, c, tools, setup, resuming);
  } catch (const InfraErrorPersists&) {
    throw;  // execute stored the run as failed, with the reason, before it threw
  } catch (const std::exception& e) {
    try {
      store.set_run_status(run_id, RunStatus::failed, e.what());
    } catch (const std::exception&) {
      // The store itself failed: the run reads as crashed once this process is gone.
    }
    throw;
  }
}

// The start of the run's first line, which says so when its verdicts will not be measurements.
std::string prefix(const RunTools& tools) { return tools.evaluation->fake() ? "[run fake-eval]" : "[run]"; }

std::string fake_note(const RunTools& tools) {
  return tools.evaluation->fake() ? "; fake evaluation backend (no GPU: verdicts are not measurements)" : "";
}

}  // namespace

AgentRunResult start_run(const RunConfig& config, const AgentRunSetup& setup) {
  RunTools tools;
  check_run_config(tools, config, setup.root);
  connect_run(tools, config, setup);
  // Only now, with every preflight passed, is the run stored.
  if (fs::path(setup.store).has_parent_path()) fs::create_directories(fs::path(setup.store).parent_path());
  RunStore store(setup.store);
  std::string model = config.model ? config.model->model : config.policy;
  // The notes name the repair conditions, so the report's runs table tells them apart.
  std::string run_id = store.create_run(config.to_json(), model, run_notes(config));
  fmt::print("{} {} started: store {}, {} definition(s), policy {}{}\n", prefix(tools), run_id, setup.store,
             config.definitions.size(), config.policy == "model" ? model : config.policy, fake_note(tools));
  std::fflush(stdout);
  return execute_or_fail(store, run_id, config, tools, setup, false);
}

AgentRunResult resume_run(const std::string& run_id, const AgentRunSetup& setup) {
  RunStore store(setup.store, RunStore::Open::existing);
  std::optional<RunInfo> info = store.find_run(run_id);
  if (!info) throw InputError("run", "no run '" + run_id + "' in " + setup.store + " (`ptxbench run --list` shows the runs)");
  if (info->imported())
    throw InputError("run", "run " + run_id + " was imported (" + info->origin +
                                "): it holds reference results, not a run of ours to resume");
  // Checked again, atomically, when the run is claimed; here so that a refusal costs no preflight.
  if (std::string held = held_elsewhere(*info, "it cannot be resumed twice"); !held.empty()) throw RunHeldError(held);
  RunConfig config = run_config_from_json(info->config, "run " + run_id + " config");
  RunTools tools;
  check_run_config(tools, config, setup.root);
  connect_run(tools, config, setup);
  RunInfo before = store.claim_run(run_id);
  fmt::print("{} {} resumed (it was {}{}){}\n", prefix(tools), run_id, to_string(before.status),
             before.failure.empty() ? "" : ": " + before.failure, fake_note(tools));
  std::fflush(stdout);
  return execute_or_fail(store, run_id, config, tools, setup, true);
}

}  // namespace ptxbench

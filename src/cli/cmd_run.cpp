// `ptxbench run --config FILE | --resume RUN`: the agent's multi-turn runs (DESIGN §6), stored in a
// run store as they happen and exported to a run folder (docs/agent.md).
#include <fmt/format.h>
#include <unistd.h>

#include "agent/agent_run.h"
#include "agent/run_config.h"
#include "agent/run_store.h"
#include "agent/trajectory_export.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"

namespace ptxbench::cli {
namespace {

struct RunArgs {
  std::string config, resume, export_run, store = "runs/runs.db", runs_dir = "runs";
  std::vector<std::string> local_service_args;
  bool list = false, json = false;
};

/// `run --list --json`: one JSON document, the stored runs newest first (gpu: null for measured runs).
ordered_json runs_json(const std::vector<RunInfo>& runs) {
  ordered_json out = ordered_json::array();
  for (const auto& r : runs)
    out.push_back({{"id", r.id}, {"status", to_string(r.status)}, {"model", r.model}, {"notes", r.notes},
                   {"origin", r.origin}, {"gpu", r.gpu.empty() ? ordered_json(nullptr) : ordered_json(r.gpu)},
                   {"created_at", r.created_at}, {"updated_at", r.updated_at}});
  return out;
}

int run_command(const RunArgs& a) {
  AgentRunSetup setup;
  setup.root = data_root();
  setup.store = a.store;
  setup.runs_dir = a.runs_dir;
  setup.ptxbench = executable_dir() / "ptxbench";
  setup.local_service_args = a.local_service_args;
  setup.tty = ::isatty(STDOUT_FILENO) != 0;
  int modes = !a.config.empty() + !a.resume.empty() + !a.export_run.empty() + a.list;
  if (modes != 1) throw InputError("cli", "give exactly one of --config FILE, --resume RUN, --export RUN, --list");
  if (a.json && !a.list) throw InputError("cli", "--json goes with --list");
  if (a.list) {
    RunStore store(a.store, RunStore::Open::existing);
    if (a.json) {
      fmt::print("{}\n", runs_json(store.list_runs()).dump(2));
      return 0;
    }
    // origin: measured (ours) or imported:SOURCE; gpu: the run's own ("-": measured runs, whose verdicts name it)
    for (const auto& r : store.list_runs())
      fmt::print("{}  {:<11} {:<27} {:<12} {:<24} {}\n", r.id, to_string(r.status), r.origin, r.gpu.empty() ? "-" : r.gpu,
                 r.model, r.notes);
    return 0;
  }
  if (!a.export_run.empty()) {
    RunStore store(a.store, RunStore::Open::existing);
    fmt::print("{}\n", export_run(store, a.export_run, a.runs_dir).string());
    return 0;
  }
  AgentRunResult r;
  if (!a.config.empty()) {
    JsonChecker check(a.config);
    r = start_run(run_config_from_json(check.parse(read_file(a.config)), a.config), setup);
  } else {
    {
      RunStore store(a.store, RunStore::Open::existing);
      if (auto info = store.find_run(a.resume); info && info->imported())
        throw InputError("cli", "run " + a.resume + " was imported (" + info->origin +
                                    "): it holds reference results, not a run of ours to resume");
    }
    r = resume_run(a.resume, setup);
  }
  fmt::print("[run] {}: {} trajectories, {} failed, {} unfinished; records in {}, files in {}/{}\n", r.run_id, r.trajectories,
             r.failed, r.unfinished, a.store, a.runs_dir, r.run_id);
  return r.complete() ? 0 : 4;
}

}  // namespace

void register_run(CLI::App& app, Action& action) {
  static RunArgs a;
  auto* cmd = app.add_subcommand("run", "run the agent: multi-turn refinement trajectories, stored as they happen");
  cmd->add_option("--config", a.config, "run config JSON (docs/agent.md)");
  cmd->add_option("--resume", a.resume, "continue a stored run (no lost, no repeated turn)");
  cmd->add_option("--export", a.export_run, "write a stored run's folder again");
  cmd->add_flag("--list", a.list, "list the stored runs, newest first");
  cmd->add_flag("--json", a.json, "with --list: print the runs as one JSON document (an array)");
  cmd->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  cmd->add_option("--runs-dir", a.runs_dir, "run folders go under DIR")->capture_default_str();
  cmd->add_option("--local-service-arg", a.local_service_args,
                  "extra option for the local service of \"service\": \"local\" (repeatable, e.g. --local-service-arg=--workers-per-gpu=2)")
      ->allow_extra_args(false);
  cmd->footer("Give exactly one of --config, --resume, --export, --list (docs/agent.md). Exit 4 when some trajectory failed or\n"
              "is unfinished (then --resume).");
  cmd->callback([&action] { action = [] { return run_command(a); }; });
}

}  // namespace ptxbench::cli

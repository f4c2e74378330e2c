// `ptxbench run --config FILE | --resume RUN`: the agent's multi-turn runs (docs/design.md §6), stored in a
// run store as they happen and exported to a run folder (docs/agent.md); `run --list` and the run
// commands delete, archive and unarchive manage the stored runs.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "agent/agent_run.h"
#include "agent/dry_run.h"
#include "agent/run_config.h"
#include "runs/run_store.h"
#include "runs/trajectory_export.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"

namespace ptxbench::cli {
namespace {

struct RunArgs {
  std::string config, resume, export_run, store = "runs/runs.db", runs_dir = "runs";
  std::vector<std::string> local_service_args;
  bool list = false, json = false, dry_run = false, all = false;
  std::string model_filter, origin_filter;
  std::vector<std::string> status_filter;
};

/// `run delete|archive|unarchive RUN...`
struct ManageArgs {
  std::vector<std::string> runs;
  std::string store = "runs/runs.db", runs_dir = "runs";
  bool force = false;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The runs `run --list` shows: archived ones only with --all; then --model (a substring, any
/// case), --status (any of those given) and --origin (measured, imported, or imported:SOURCE).
std::vector<RunInfo> filtered_runs(const std::vector<RunInfo>& runs, const RunArgs& a) {
  std::vector<RunStatus> statuses;
  for (const auto& s : a.status_filter) statuses.push_back(*parse_run_status(s));  // checked by the option
  std::vector<RunInfo> out;
  for (const auto& r : runs) {
    if (r.archived() && !a.all) continue;
    if (!a.model_filter.empty() && lower(r.model).find(lower(a.model_filter)) == std::string::npos) continue;
    if (!statuses.empty() && std::find(statuses.begin(), statuses.end(), r.status) == statuses.end()) continue;
    if (a.origin_filter == "measured" && r.imported()) continue;
    if (a.origin_filter == "imported" && !r.imported()) continue;
    if (a.origin_filter.rfind(kImportedOriginPrefix, 0) == 0 && r.origin != a.origin_filter) continue;
    out.push_back(r);
  }
  return out;
}

/// `run --list --json`: one JSON document, the runs newest first (gpu: null for measured runs).
ordered_json runs_json(const std::vector<RunInfo>& runs) {
  ordered_json out = ordered_json::array();
  for (const auto& r : runs)
    out.push_back({{"id", r.id}, {"status", to_string(r.status)}, {"model", r.model}, {"notes", r.notes},
                   {"origin", r.origin}, {"gpu", r.gpu.empty() ? ordered_json(nullptr) : ordered_json(r.gpu)},
                   {"created_at", r.created_at}, {"updated_at", r.updated_at},
                   {"failure", r.failure.empty() ? ordered_json(nullptr) : ordered_json(r.failure)},
                   {"holder", r.holder ? ordered_json{{"pid", r.holder->pid}, {"host", r.holder->host}} : ordered_json(nullptr)},
                   {"archived", r.archived()},
                   {"archived_at", r.archived_at ? ordered_json(*r.archived_at) : ordered_json(nullptr)}});
  return out;
}

std::string utc_minutes(double t) {
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

/// The table of `run --list`: a header, then one aligned row per run; the last column (notes, and
/// why a failed run failed) is not padded.
void print_runs_table(const std::vector<RunInfo>& runs) {
  std::vector<std::vector<std::string>> rows = {{"ID", "STATUS", "ORIGIN", "GPU", "MODEL", "UPDATED (UTC)", "NOTES"}};
  for (const auto& r : runs) {
    std::string notes = r.notes;
    if (!r.failure.empty()) {
      std::string why = r.failure.size() > 120 ? r.failure.substr(0, 117) + "..." : r.failure;
      notes += (notes.empty() ? "" : " ") + ("[" + why + "]");
    }
    if (r.archived()) notes = "[archived]" + (notes.empty() ? "" : " " + notes);
    rows.push_back({r.id, to_string(r.status), r.origin, r.gpu.empty() ? "-" : r.gpu, r.model.empty() ? "-" : r.model,
                    utc_minutes(r.updated_at), notes.empty() ? "-" : notes});
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c)
      line += c + 1 < row.size() ? fmt::format("{:<{}}  ", row[c], width[c]) : row[c];
    fmt::print("{}\n", line);
  }
}

int list_runs(const RunArgs& a) {
  // Read only: listing never creates, migrates in place or locks a store another run writes.
  RunStore store(a.store, RunStore::Open::read_only);
  std::vector<RunInfo> all = store.list_runs();
  std::vector<RunInfo> runs = filtered_runs(all, a);
  if (a.json) {
    fmt::print("{}\n", runs_json(runs).dump(2));
    return kExitDone;
  }
  if (runs.empty()) {
    std::size_t archived = std::count_if(all.begin(), all.end(), [](const RunInfo& r) { return r.archived(); });
    if (all.empty())
      fmt::print("no run in {}\n", a.store);
    else
      fmt::print("no run matches ({} stored in {}{})\n", all.size(), a.store,
                 archived && !a.all ? fmt::format(", {} archived: --all shows them", archived) : "");
    return kExitDone;
  }
  print_runs_table(runs);
  return kExitDone;
}

AgentRunSetup run_setup(const RunArgs& a) {
  AgentRunSetup setup;
  setup.root = data_root();
  setup.store = a.store;
  setup.runs_dir = a.runs_dir;
  setup.ptxbench = executable_dir() / "ptxbench";
  setup.local_service_args = a.local_service_args;
  setup.tty = ::isatty(STDOUT_FILENO) != 0;
  return setup;
}

int run_command(const RunArgs& a) {
  int modes = !a.config.empty() + !a.resume.empty() + !a.export_run.empty() + a.list;
  if (modes != 1) throw InputError("cli", "give exactly one of --config FILE, --resume RUN, --export RUN, --list (or a command: delete, archive, unarchive)");
  if (a.json && !a.list) throw InputError("cli", "--json goes with --list");
  if ((a.all || !a.model_filter.empty() || !a.status_filter.empty() || !a.origin_filter.empty()) && !a.list)
    throw InputError("cli", "--all, --model, --status and --origin go with --list");
  if (a.dry_run && a.config.empty()) throw InputError("cli", "--dry-run goes with --config FILE");
  if (a.list) return list_runs(a);
  if (!a.export_run.empty()) {
    RunStore store(a.store, RunStore::Open::existing);
    fmt::print("{}\n", export_run(store, a.export_run, a.runs_dir).string());
    return kExitDone;
  }
  AgentRunSetup setup = run_setup(a);
  AgentRunResult r;
  if (!a.config.empty()) {
    JsonChecker check(a.config);
    RunConfig config = run_config_from_json(check.parse(read_file(a.config)), a.config);
    if (a.dry_run) {
      dry_run(config, a.config, setup);
      return kExitDone;
    }
    r = start_run(config, setup);
  } else {
    r = resume_run(a.resume, setup);
  }
  const std::string prefix = r.fake_evaluation ? "[run fake-eval]" : "[run]";
  fmt::print("{} {} {}: {} trajectories, {} failed, {} unfinished; records in {}, files in {}/{}\n", prefix, r.run_id,
             r.complete() ? "finished" : "failed", r.trajectories, r.failed, r.unfinished, a.store, a.runs_dir, r.run_id);
  if (!r.complete())
    fmt::print("{} why: {}\n{} `ptxbench run --resume {}` continues it\n", prefix, r.failure, prefix, r.run_id);
  return r.complete() ? kExitDone : kExitUnfinished;
}

/// Every id must name a stored run (all are checked before any is changed).
void require_runs(const RunStore& store, const std::vector<std::string>& ids) {
  for (const auto& id : ids)
    if (!store.find_run(id))
      throw InputError("run", "no run '" + id + "' in " + store.path() + " (`ptxbench run --list --all` shows the runs)");
}

int delete_command(const ManageArgs& a) {
  RunStore store(a.store, RunStore::Open::existing);
  require_runs(store, a.runs);
  if (!a.force)
    for (const auto& id : a.runs)
      if (std::string held = held_elsewhere(store.run(id), "it is not deleted while it runs, unless --force");
          !held.empty())
        throw RunHeldError(held);
  for (const auto& id : a.runs) {
    DeletedRun d = store.delete_run(id, a.force);
    fs::path folder = fs::path(a.runs_dir) / id;
    std::error_code ec;
    fmt::print("deleted run {}: {} trajectories, {} turns{}\n", id, d.trajectories, d.turns,
               fs::exists(folder, ec) ? fmt::format(" (its exported folder {} is left as it is)", folder.string()) : "");
  }
  return kExitDone;
}

int archive_command(const ManageArgs& a, bool archive) {
  RunStore store(a.store, RunStore::Open::existing);
  require_runs(store, a.runs);
  for (const auto& id : a.runs) {
    store.set_run_archived(id, archive);
    if (archive)
      fmt::print("archived run {}: hidden from `run --list` (--all shows it); `report {}` still reads it\n", id, id);
    else
      fmt::print("unarchived run {}: listed again\n", id);
  }
  return kExitDone;
}

void add_manage_options(CLI::App* sub, ManageArgs& m) {
  sub->add_option("runs", m.runs, "run ids (as `run --list` shows them)")->required();
  sub->add_option("--store", m.store, "run store (SQLite)")->capture_default_str();
}

}  // namespace

void register_run(CLI::App& app, Action& action) {
  static RunArgs a;
  static ManageArgs del, arch, unarch;
  auto* cmd = app.add_subcommand("run", "run the agent: multi-turn refinement trajectories, stored as they happen");
  cmd->require_subcommand(0, 1);
  cmd->add_option("--config", a.config, "run config JSON (docs/agent.md)");
  cmd->add_flag("--dry-run", a.dry_run,
                "with --config: check the config end to end with a fake model and the fake evaluation backend (no key, no "
                "network, no GPU), store nothing, and print what would run");
  cmd->add_option("--resume", a.resume, "continue a stored run that failed, crashed or was interrupted (no lost, no repeated turn)");
  cmd->add_option("--export", a.export_run, "write a stored run's folder again");
  cmd->add_flag("--list", a.list, "list the stored runs, newest first, in a table with a header");
  cmd->add_flag("--json", a.json, "with --list: print the runs as one JSON document (an array)");
  cmd->add_flag("--all", a.all, "with --list: archived runs too");
  cmd->add_option("--model", a.model_filter, "with --list: runs whose model contains this text (any case)");
  cmd->add_option("--status", a.status_filter, "with --list: runs in this status (repeatable)")
      ->check(CLI::IsMember({"running", "finished", "failed", "crashed", "interrupted"}));
  cmd->add_option("--origin", a.origin_filter, "with --list: measured (our runs), imported, or imported:SOURCE")
      ->check([](const std::string& v) {
        return v == "measured" || v == "imported" || (v.rfind(kImportedOriginPrefix, 0) == 0 && v.size() > 9)
                   ? std::string()
                   : std::string("expected measured, imported or imported:SOURCE, got '" + v + "'");
      });
  cmd->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  cmd->add_option("--runs-dir", a.runs_dir, "run folders go under DIR")->capture_default_str();
  cmd->add_option("--local-service-arg", a.local_service_args,
                  "extra option for the local service of \"service\": \"local\" (repeatable, e.g. --local-service-arg=--workers-per-gpu=2)")
      ->allow_extra_args(false);
  cmd->footer(
      "Give exactly one of --config, --resume, --export, --list, or a command (docs/agent.md). Before a run is stored,\n"
      "its preflight checks the config, the model's API key and endpoint, and the evaluation service: a failure stores\n"
      "nothing and exits 2 (bad config, missing key) or 3 (endpoint or service unreachable). A run is running while its\n"
      "process lives, then finished or failed (its reason stored); one whose process died reads crashed. Exit 3 when an\n"
      "INFRA_ERROR outlived its re-runs (the run failed), 4 when some trajectory failed or is unfinished (then --resume).");
  cmd->callback([&action, cmd] {
    if (cmd->get_subcommands().empty()) action = [] { return run_command(a); };
  });

  auto* del_cmd = cmd->add_subcommand("delete", "delete stored runs and everything of them (refused for a run a live process holds)");
  add_manage_options(del_cmd, del);
  del_cmd->add_option("--runs-dir", del.runs_dir, "where their exported folders are (named, never deleted)")->capture_default_str();
  del_cmd->add_flag("--force", del.force, "delete a run even while a live process holds it (that process then fails)");
  del_cmd->callback([&action] { action = [] { return delete_command(del); }; });

  auto* arch_cmd = cmd->add_subcommand("archive", "hide runs from `run --list` (shown with --all); reports still read them by id");
  add_manage_options(arch_cmd, arch);
  arch_cmd->callback([&action] { action = [] { return archive_command(arch, true); }; });

  auto* unarch_cmd = cmd->add_subcommand("unarchive", "list archived runs again");
  add_manage_options(unarch_cmd, unarch);
  unarch_cmd->callback([&action] { action = [] { return archive_command(unarch, false); }; });
}

}  // namespace ptxbench::cli

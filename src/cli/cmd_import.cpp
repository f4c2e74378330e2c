// `ptxbench import ptxbench-original FILE.csv [--store FILE] [--json]`: the original PTXBench's
// released per-turn results as reference runs in a run store, for `ptxbench report` to set beside
// ours (docs/report.md, "Importing the original PTXBench's results").
#include <fmt/format.h>

#include <algorithm>

#include "runs/import_original.h"
#include "runs/run_store.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"

namespace ptxbench::cli {
namespace {

struct ImportArgs {
  std::string file, store = "runs/runs.db";
  bool json = false;
};

void print_summary(const OriginalImportSummary& s) {
  fmt::print("[import] {} (sha256 {}, {} rows) into {}\n", s.file, s.sha256.substr(0, 16), s.rows, s.store);
  std::size_t model_width = 5;
  int64_t short_trajectories = 0;
  for (const auto& r : s.runs) {
    model_width = std::max(model_width, r.model.size());
    if (!r.already_imported) short_trajectories += r.short_trajectories;
  }
  auto row = [&](const std::string& id, const std::string& model, const std::string& arch, const std::string& gpu,
                 const std::string& experiments, const std::string& trajectories, const std::string& short_ones,
                 const std::string& turns, const std::string& result) {
    fmt::print("{:<20}  {:<{}}  {:<9}  {:<11}  {:>11}  {:>12}  {:>5}  {:>5}  {}\n", id, model, model_width, arch, gpu, experiments,
               trajectories, short_ones, turns, result);
  };
  row("run", "model", "arch", "gpu", "experiments", "trajectories", "short", "turns", "result");
  for (const auto& r : s.runs)
    row(r.run_id, r.model, r.arch, r.gpu, std::to_string(r.experiments), std::to_string(r.trajectories),
        std::to_string(r.short_trajectories), std::to_string(r.turns), r.already_imported ? "already imported" : "created");
  fmt::print("{} runs ({} created, {} already imported), {} models, {} trajectories, {} turns\n", s.runs.size(),
             s.runs_created(), static_cast<int64_t>(s.runs.size()) - s.runs_created(), s.models(), s.trajectories(),
             s.turns());
  if (short_trajectories > 0)
    fmt::print("short trajectories (fewer turns than their run's longest): {}, stored as failed; reports count their missing "
               "turns as not correct (the paper's rule; report --carry-forward carries the last verdict instead)\n",
               short_trajectories);
  if (s.skipped.empty()) fmt::print("skipped rows: none\n");
  for (const auto& k : s.skipped) fmt::print("skipped {} rows: {}\n", k.rows, k.reason);
}

int import_original_command(const ImportArgs& a) {
  OriginalRelease release = read_original_csv(a.file);  // a bad file leaves no store behind
  fs::path store_path(a.store);
  if (store_path.has_parent_path()) fs::create_directories(store_path.parent_path());
  RunStore store(a.store);
  OriginalImportSummary s = import_original(store, release);
  if (a.json)
    fmt::print("{}\n", s.to_json().dump(2));
  else
    print_summary(s);
  return 0;
}

}  // namespace

void register_import(CLI::App& app, Action& action) {
  static ImportArgs a;
  auto* cmd = app.add_subcommand("import", "import another benchmark's published results into a run store as reference runs");
  cmd->require_subcommand(1);
  auto* orig = cmd->add_subcommand(
      "ptxbench-original",
      "the original PTXBench's per-turn results (benchmark/plot_viewer_v1/data/reasoning_tokens_vs_performance.csv): "
      "one run per model x arch");
  orig->add_option("file", a.file, "the release's reasoning_tokens_vs_performance.csv")->required();
  orig->add_option("--store", a.store, "run store (SQLite; created when absent)")->capture_default_str();
  orig->add_flag("--json", a.json, "print the summary as one JSON document (schema ptxbench.import)");
  orig->footer("Importing the same file again changes nothing (runs are keyed by the file's SHA-256, model and arch). A\n"
               "malformed row is a usage error (exit 2) naming its line, and nothing is written. The runs have origin\n"
               "imported:ptxbench-original: `run --list` shows them, `report` reads them, one row per experiment and\n"
               "definition (docs/report.md).");
  orig->callback([&action] { action = [] { return import_original_command(a); }; });
}

}  // namespace ptxbench::cli

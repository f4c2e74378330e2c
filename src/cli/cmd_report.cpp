// `ptxbench report RUN... [--store FILE] [--csv FILE] [--json FILE] [--html FILE] [--budgets 1,4,8]
// [--by definition|tag] [--allow-fake]`: the paper's metrics (DESIGN §7) over stored agent runs, as terminal tables and
// files (docs/report.md).
#include <fmt/format.h>

#include <cstdio>

#include "agent/run_store.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"
#include "report/report_data.h"
#include "report/report_export.h"
#include "report/report_html.h"
#include "report/report_text.h"

namespace ptxbench::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> runs;
  std::string store = "runs/runs.db", csv, json, html;
  std::vector<int> budgets = {1, 4, 8};
  bool allow_fake = false;
  std::string by = "definition";
};

void write_output(const std::string& path, const std::string& content, const char* what) {
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  write_file_atomic(p, content);
  fmt::print(stderr, "[report] {} written to {}\n", what, path);
}

int report_command(const ReportArgs& a) {
  if (!fs::exists(a.store)) throw InputError("report", "no run store at " + a.store + " (--store FILE)");
  RunStore store(a.store, RunStore::Open::existing);
  report::Report r = report::build_report(store, a.runs, a.budgets,
                                          a.allow_fake ? report::FakeVerdicts::allow : report::FakeVerdicts::refuse,
                                          a.by == "tag" ? report::GroupBy::tag : report::GroupBy::definition);
  fmt::print("{}", report::render_text(r));
  std::fflush(stdout);
  if (!a.csv.empty()) write_output(a.csv, report::report_csv(r), "CSV");
  if (!a.json.empty()) write_output(a.json, report::report_json(r).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n", "JSON");
  if (!a.html.empty()) write_output(a.html, report::render_html(r), "HTML");
  return 0;
}

}  // namespace

void register_report(CLI::App& app, Action& action) {
  static ReportArgs a;
  auto* cmd = app.add_subcommand("report", "paper-style metrics of stored agent runs: tables, CSV, JSON, one self-contained HTML");
  cmd->add_option("runs", a.runs, "run ids (or unique prefixes) from the store; with several, token ratios compare the first with each other")
      ->required();
  cmd->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  cmd->add_option("--csv", a.csv, "also write the metrics as long-format CSV");
  cmd->add_option("--json", a.json, "also write the report as JSON (schema ptxbench.report)");
  cmd->add_option("--html", a.html, "also write one self-contained HTML file (tables, curves, drill-down)");
  cmd->add_option("--budgets", a.budgets, "turn budgets T, comma-separated")->delimiter(',')->capture_default_str();
  cmd->add_option("--by", a.by,
                  "group rows by definition, or by definition x prompt tag with '(all)' rows per tag (the prompt-knowledge "
                  "ablation, Table 4, from one run)")
      ->check(CLI::IsMember({"definition", "tag"}))
      ->capture_default_str();
  cmd->add_flag("--allow-fake", a.allow_fake,
                "report runs holding verdicts of the service's fake backend (serve --fake-gpus), marked as such in every "
                "output; without it they are refused");
  cmd->callback([&action] { action = [] { return report_command(a); }; });
}

}  // namespace ptxbench::cli

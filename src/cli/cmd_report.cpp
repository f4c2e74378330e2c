// `ptxbench report RUN... [--store FILE] [--csv FILE] [--json FILE] [--html FILE] [--budgets 1,4,8]
// [--by definition|tag] [--allow-fake]`: the paper's metrics (DESIGN §7) over stored agent runs, as terminal tables and
// files (docs/report.md). With `--against REFINEMENT_RUN [--requests N] [--bootstrap B] [--seed S] [--confidence C]`,
// the one RUN (an external agent's, `ptxbench mcp`) is compared with the refinement run instead: Table 3 and Figure 14.
#include <fmt/format.h>

#include <cstdio>

#include "agent/run_store.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"
#include "report/agent_comparison.h"
#include "report/agent_comparison_html.h"
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
  // --against: the agent-vs-refinement comparison (report/agent_comparison.h).
  std::string against;
  int requests = 0;
  report::BootstrapOptions bootstrap;
  bool requests_given = false, budgets_given = false, by_given = false, bootstrap_given = false;
};

void write_output(const std::string& path, const std::string& content, const char* what) {
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  write_file_atomic(p, content);
  fmt::print(stderr, "[report] {} written to {}\n", what, path);
}

int agent_comparison_command(const ReportArgs& a, const RunStore& store) {
  if (a.runs.size() != 1)
    throw InputError("report", fmt::format("--against compares ONE agent run with the refinement run: give one RUN, got {}", a.runs.size()));
  if (a.budgets_given || a.by_given)
    throw InputError("report", "--budgets and --by do not apply with --against: it compares at --requests N evaluation requests");
  report::AgentComparisonOptions o;
  if (a.requests_given) o.requests = a.requests;
  o.bootstrap = a.bootstrap;
  o.fake = a.allow_fake ? report::FakeVerdicts::allow : report::FakeVerdicts::refuse;
  report::AgentComparison c = report::compare_agent_runs(store, a.runs[0], a.against, o);
  fmt::print("{}", report::render_agent_comparison_text(c));
  std::fflush(stdout);
  if (!a.csv.empty()) write_output(a.csv, report::agent_comparison_csv(c), "CSV");
  if (!a.json.empty())
    write_output(a.json, report::agent_comparison_json(c).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n", "JSON");
  if (!a.html.empty()) write_output(a.html, report::render_agent_comparison_html(c), "HTML");
  return 0;
}

int report_command(const ReportArgs& a) {
  if (!fs::exists(a.store)) throw InputError("report", "no run store at " + a.store + " (--store FILE)");
  RunStore store(a.store, RunStore::Open::existing);
  if (!a.against.empty()) return agent_comparison_command(a, store);
  if (a.requests_given || a.bootstrap_given)
    throw InputError("report", "--requests, --bootstrap, --seed and --confidence go with --against REFINEMENT_RUN");
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
  auto* budgets = cmd->add_option("--budgets", a.budgets, "turn budgets T, comma-separated")->delimiter(',')->capture_default_str();
  auto* by = cmd->add_option("--by", a.by,
                             "group rows by definition, or by definition x prompt tag with '(all)' rows per tag (the prompt-knowledge "
                             "ablation, Table 4, from one run)")
                 ->check(CLI::IsMember({"definition", "tag"}))
                 ->capture_default_str();
  cmd->add_flag("--allow-fake", a.allow_fake,
                "report runs holding verdicts of the service's fake backend (serve --fake-gpus), marked as such in every "
                "output; without it they are refused");
  cmd->add_option("--against", a.against,
                  "compare the one RUN (an external agent's, ptxbench mcp) with this refinement run: Table 3 and Figure 14 (the "
                  "CSV, JSON (schema ptxbench.agent_comparison) and HTML files hold the comparison)");
  auto* requests = cmd->add_option("--requests", a.requests,
                                   "with --against: evaluation requests N per trajectory compared (default: the agent run's budget, "
                                   "its num_turns)")
                       ->check(CLI::PositiveNumber);
  auto* resamples = cmd->add_option("--bootstrap", a.bootstrap.resamples, "with --against: bootstrap resamples B of the bands")
                        ->check(CLI::Range(int64_t{1}, int64_t{100000}))
                        ->capture_default_str();
  auto* seed = cmd->add_option("--seed", a.bootstrap.seed, "with --against: the bootstrap's seed (the same seed gives the same bands)")
                   ->capture_default_str();
  auto* confidence = cmd->add_option("--confidence", a.bootstrap.confidence, "with --against: the bands' coverage, between 0 and 1")
                         ->check(CLI::Range(0.0, 1.0))
                         ->capture_default_str();
  cmd->callback([&action, requests, budgets, by, resamples, seed, confidence] {
    a.requests_given = requests->count() > 0;
    a.budgets_given = budgets->count() > 0;
    a.by_given = by->count() > 0;
    a.bootstrap_given = resamples->count() > 0 || seed->count() > 0 || confidence->count() > 0;
    action = [] { return report_command(a); };
  });
}

}  // namespace ptxbench::cli

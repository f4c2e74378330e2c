// `ptxbench report RUN... [--store FILE] [--full] [--csv FILE] [--json FILE] [--html FILE] [--budgets 1,4,8]
// [--by definition|tag] [--carry-forward] [--model M] [--definition D] [--tag T] [--pass-k 1,4] [--bootstrap B]
// [--seed S] [--confidence C] [--allow-fake]`: the paper's metrics (docs/design.md §7) over stored agent runs, as
// terminal tables and files (docs/report.md); "-" writes a file's content to stdout. With `--against REFINEMENT_RUN
// [--requests N]`, the one RUN (an external agent's, `ptxbench mcp`) is compared with the refinement run instead:
// Table 3 and Figure 14.
#include <fmt/format.h>

#include <cstdio>

#include "runs/run_store.h"
#include "cli/commands.h"
#include "cli/output_path.h"
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
  bool allow_fake = false, full = false, carry_forward = false;
  std::string by = "definition";
  std::vector<std::string> models, definitions, tags;
  std::vector<int> pass_k = {1, 4};
  report::BootstrapOptions bootstrap;
  // --against: the agent-vs-refinement comparison (report/agent_comparison.h).
  std::string against;
  int requests = 0;
  bool requests_given = false, budgets_given = false, by_given = false, pass_k_given = false;
};

// The output files, checked before any work (cli/output_path.h): a folder that is missing is
// created, one that cannot be written is refused, and at most one output is stdout ("-").
class Outputs {
 public:
  explicit Outputs(const ReportArgs& a, bool side_file) {
    add("--csv", a.csv);
    if (side_file && !a.csv.empty() && !is_stdout(a.csv)) add("--csv (metric definitions)", report::metrics_csv_path(a.csv));
    add("--json", a.json);
    add("--html", a.html);
    int on_stdout = 0;
    for (const auto& f : m_files) on_stdout += f.to_stdout();
    if (on_stdout > 1) throw InputError("report", "only one of --csv, --json and --html can be - (stdout)");
    for (std::size_t i = 0; i < m_files.size(); ++i)
      for (std::size_t j = i + 1; j < m_files.size(); ++j)
        if (!m_files[i].to_stdout() && fs::absolute(m_files[i].path()).lexically_normal() == fs::absolute(m_files[j].path()).lexically_normal())
          throw InputError("report", "two outputs name the same file " + m_files[i].path());
  }
  /// Whether stdout carries a file: the terminal report is then not printed.
  [[nodiscard]] bool stdout_taken() const {
    for (const auto& f : m_files)
      if (f.to_stdout()) return true;
    return false;
  }
  void write(const std::string& path, const std::string& content, const char* what) const {
    if (path.empty()) return;
    for (const auto& f : m_files)
      if (f.path() == path) {
        f.write(content);
        if (!f.to_stdout()) fmt::print(stderr, "[report] {} written to {}\n", what, path);
        return;
      }
  }

 private:
  void add(const char* option, const std::string& path) {
    if (path.empty()) return;
    if (!is_stdout(path)) {
      // The report has always created the folders of its outputs; the shared check then asks for a
      // writable folder and a writable (or new) file.
      fs::path folder = fs::absolute(path).parent_path();
      std::error_code ec;
      if (!fs::exists(folder, ec)) fs::create_directories(folder, ec);
    }
    m_files.emplace_back(option, path);
  }
  std::vector<OutputFile> m_files;
};

int agent_comparison_command(const ReportArgs& a, const RunStore& store) {
  if (a.runs.size() != 1)
    throw InputError("report", fmt::format("--against compares ONE agent run with the refinement run: give one RUN, got {}", a.runs.size()));
  if (a.budgets_given || a.by_given || a.carry_forward || a.full || a.pass_k_given || !a.models.empty() || !a.definitions.empty() ||
      !a.tags.empty())
    throw InputError("report", "--budgets, --by, --carry-forward, --full, --pass-k, --model, --definition and --tag do not apply "
                               "with --against: it compares at --requests N evaluation requests");
  Outputs out(a, false);
  report::AgentComparisonOptions o;
  if (a.requests_given) o.requests = a.requests;
  o.bootstrap = a.bootstrap;
  o.fake = a.allow_fake ? report::FakeVerdicts::allow : report::FakeVerdicts::refuse;
  report::AgentComparison c = report::compare_agent_runs(store, a.runs[0], a.against, o);
  if (!out.stdout_taken()) {
    fmt::print("{}", report::render_agent_comparison_text(c));
    std::fflush(stdout);
  }
  out.write(a.csv, report::agent_comparison_csv(c), "CSV");
  out.write(a.json, report::agent_comparison_json(c).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n", "JSON");
  out.write(a.html, report::render_agent_comparison_html(c), "HTML");
  return 0;
}

int report_command(const ReportArgs& a) {
  if (!fs::exists(a.store)) throw InputError("report", "no run store at " + a.store + " (--store FILE)");
  if (!a.against.empty()) {
    RunStore store(a.store, RunStore::Open::existing);
    return agent_comparison_command(a, store);
  }
  if (a.requests_given) throw InputError("report", "--requests goes with --against REFINEMENT_RUN");
  Outputs out(a, true);
  RunStore store(a.store, RunStore::Open::existing);
  report::ReportOptions o;
  o.budgets = a.budgets;
  o.fake = a.allow_fake ? report::FakeVerdicts::allow : report::FakeVerdicts::refuse;
  o.by = a.by == "tag" ? report::GroupBy::tag : report::GroupBy::definition;
  o.missing = a.carry_forward ? report::MissingTurns::carry_forward : report::MissingTurns::not_correct;
  o.filters = {a.models, a.definitions, a.tags};
  o.bootstrap = a.bootstrap;
  o.pass_k = a.pass_k;
  report::Report r = report::build_report(store, a.runs, o);
  if (!out.stdout_taken()) {
    fmt::print("{}", report::render_text(r, a.full ? report::TextDetail::full : report::TextDetail::paper));
    std::fflush(stdout);
  }
  out.write(a.csv, report::report_csv(r), "CSV");
  if (!a.csv.empty() && !is_stdout(a.csv))
    out.write(report::metrics_csv_path(a.csv), report::report_csv_metrics(r), "CSV metric definitions");
  out.write(a.json, report::report_json(r).dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n", "JSON");
  out.write(a.html, report::render_html(r), "HTML");
  return 0;
}

}  // namespace

void register_report(CLI::App& app, Action& action) {
  static ReportArgs a;
  auto* cmd = app.add_subcommand("report", "paper-style metrics of stored agent runs: tables, CSV, JSON, one self-contained HTML");
  cmd->add_option("runs", a.runs, "run ids (or unique prefixes) from the store; with several, token ratios compare the first with each other")
      ->required();
  cmd->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  cmd->add_flag("--full", a.full,
                "print every table (median, Fast_p, pass@k, the strict rule, '(all)' rows, labels, transitions, tokens, "
                "definitions); by default the terminal shows the paper's Table 1 and Table 9");
  cmd->add_option("--csv", a.csv,
                  "also write the metrics as a tidy CSV (a row per group x metric x T), and the metric definitions beside it in "
                  "FILE.metrics.csv; - for stdout");
  cmd->add_option("--json", a.json, "also write the report as JSON (schema ptxbench.report); - for stdout");
  cmd->add_option("--html", a.html, "also write one self-contained HTML file (curves, tables, drill-down); - for stdout");
  auto* budgets = cmd->add_option("--budgets", a.budgets, "turn budgets T, comma-separated")->delimiter(',')->capture_default_str();
  auto* by = cmd->add_option("--by", a.by,
                             "group rows by definition, or by definition x prompt tag with '(all)' rows per tag (the prompt-knowledge "
                             "ablation, Table 4, from one run)")
                 ->check(CLI::IsMember({"definition", "tag"}))
                 ->capture_default_str();
  cmd->add_flag("--carry-forward", a.carry_forward,
                "fill a trajectory's missing turns (early stop, failure, short import) with its last verdict; by default they "
                "count as not correct, the paper's rule");
  cmd->add_option("--model", a.models, "report only this model's trajectories (exact name; repeat for several)");
  cmd->add_option("--definition", a.definitions, "report only this definition's trajectories (repeat for several)");
  cmd->add_option("--tag", a.tags,
                  "report only trajectories of this prompt tag (an imported run's experiment; repeat for several)");
  auto* pass_k = cmd->add_option("--pass-k", a.pass_k, "k of the unbiased pass@k, comma-separated (k above a group's trajectories: n/a)")
                     ->delimiter(',')
                     ->check(CLI::PositiveNumber)
                     ->capture_default_str();
  cmd->add_flag("--allow-fake", a.allow_fake,
                "report runs holding verdicts of the service's fake backend (serve --fake-gpus), marked as such in every "
                "output; without it they are refused");
  cmd->add_option("--bootstrap", a.bootstrap.resamples,
                  "bootstrap resamples B of the intervals (with --against: of the bands)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}))
      ->capture_default_str();
  cmd->add_option("--seed", a.bootstrap.seed, "the bootstrap's seed (the same seed gives the same intervals)")->capture_default_str();
  cmd->add_option("--confidence", a.bootstrap.confidence, "the intervals' coverage, between 0 and 1")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--against", a.against,
                  "compare the one RUN (an external agent's, ptxbench mcp) with this refinement run: Table 3 and Figure 14 (the "
                  "CSV, JSON (schema ptxbench.agent_comparison) and HTML files hold the comparison)");
  auto* requests = cmd->add_option("--requests", a.requests,
                                   "with --against: evaluation requests N per trajectory compared (default: the agent run's budget, "
                                   "its num_turns)")
                       ->check(CLI::PositiveNumber);
  cmd->footer("Missing turns count as not correct (the paper's rule: denominator = trajectories x T) unless --carry-forward.\n"
              "Imported runs are split by experiment. Every output names the rule; docs/report.md defines every metric.");
  cmd->callback([&action, requests, budgets, by, pass_k] {
    a.requests_given = requests->count() > 0;
    a.budgets_given = budgets->count() > 0;
    a.by_given = by->count() > 0;
    a.pass_k_given = pass_k->count() > 0;
    action = [] { return report_command(a); };
  });
}

}  // namespace ptxbench::cli

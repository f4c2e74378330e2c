// `ptxbench suite run|load|materialize SUITE`: evaluate a candidate suite and compare every verdict
// with the one expected (the main job for the bundled fixtures), put a suite's cases as load on the
// evaluation service, or write its cases out as files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "cli/eval_args.h"
#include "cli/host_gpu.h"
#include "cli/output_path.h"
#include "common/error.h"
#include "common/fs.h"
#include "definitions/catalog.h"
#include "suite/candidate_suite.h"
#include "suite/suite_load.h"

namespace ptxbench::cli {
namespace {

struct Args {
  std::string suite, dir;
  std::vector<std::string> only;
  EvalArgs eval;
  bool json = false;  ///< materialize --json
};

int run_suite(const Args& a) {
  CandidateSuite suite = load_suite(a.suite);
  for (const auto& name : a.only)
    if (std::none_of(suite.cases.begin(), suite.cases.end(), [&](const SuiteCase& c) { return c.name == name; }))
      throw InputError("cli", "--only " + name + ": no such case in " + a.suite);
  VerdictPrinter printer(a.eval, "expected");  // checks --out before any work
  Catalog catalog = Catalog::load(data_root());
  EvalOptions options = to_eval_options(a.eval);
  Evaluator evaluator(catalog, options);
  // Asked once, up front: on a host where no evaluation can reach a GPU, a case whose verdict needs
  // one ends in INFRA_ERROR without being tried. It is skipped, not a mismatch; a case the compile
  // stage decides is still checked (and a wrong verdict there still fails).
  const std::string no_gpu = gpu_unusable_reason(a.eval.device, options.compile.arch);
  int wrong = 0, infra = 0, ran = 0, skipped = 0;
  for (const auto& c : suite.cases) {
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), c.name) == a.only.end()) continue;
    for (int r = 0; r < a.eval.repeat; ++r) {
      std::string label = c.name + (a.eval.repeat > 1 ? "." + std::to_string(r + 1) : "");
      Verdict v = evaluator.evaluate_source(suite.definition, a.eval.workload, c.source, std::nullopt, c.language);
      ++ran;
      std::string note;
      const bool gpu_missing = !no_gpu.empty() && v.status == Status::INFRA_ERROR;
      // The compile stage's statuses need no GPU: a host without one decides these too.
      if (gpu_missing && !is_compile_stage(c.expect.status) && c.expect.status != Status::INFRA_ERROR) {
        ++skipped;
        note = "SKIPPED (no GPU)";
      } else {
        auto problems = expectation_mismatches(c.expect, v);
        if (!gpu_missing && print_infra_reason(label, v)) ++infra;
        if (!problems.empty()) ++wrong;
        note = problems.empty() ? "ok (" + to_string(c.expect.status) + ")" : "MISMATCH: " + problems.front();
      }
      printer.print(label, v, note);
    }
  }
  const int checked = ran - skipped;
  std::string summary = fmt::format("{} of {} verdicts as expected", checked - wrong, checked);
  if (skipped) summary += fmt::format("; {} skipped ({})", skipped, no_gpu);
  fmt::print(printer.json_on_stdout() ? stderr : stdout, "{}\n", summary);
  if (infra) return 3;
  if (wrong) return 1;
  return checked == 0 && skipped > 0 ? kExitAllSkipped : 0;
}

struct LoadArgs {
  std::vector<std::string> suites;
  LoadOptions load;
  std::string out, token_file;
  int64_t seed = -1;
  int trials = 0;
  bool json = false;
};

int run_suite_load(LoadArgs& a) {
  // `--out -`: the records are the JSON lines on stdout, everything else goes to stderr.
  const bool records_on_stdout = is_stdout(a.out);
  if (records_on_stdout && a.json) throw InputError("cli", "--json and --out - both print on stdout: give one");
  if (!a.out.empty()) check_output_file("--out", a.out);  // before any submission
  std::vector<LoadCase> cases;
  std::vector<std::string> definitions;
  for (const auto& file : a.suites) {
    CandidateSuite suite = load_suite(file);
    definitions.push_back(suite.definition);
    for (auto& c : suite.cases) cases.push_back({suite.definition, std::move(c)});
  }
  a.load.client = service_client_options(a.token_file);
  // An unreachable service, or one without the suites' definitions, fails here, naming it.
  ServiceClient(a.load.service, a.load.client).require_definitions(definitions, "suite load");
  if (a.seed >= 0) a.load.options["seed"] = a.seed;
  if (a.trials > 0) a.load.options["trials"] = a.trials;
  // With --json, stdout carries only the summary document; the progress goes to stderr.
  std::FILE* human = a.json || records_on_stdout ? stderr : stdout;
  fmt::print(human, "[load] {} submissions of {} cases from {} clients to {}\n", a.load.count, cases.size(), a.load.clients,
             a.load.service);
  std::fflush(human);
  // Records are appended as verdicts arrive, so a load cut short still leaves its data.
  std::FILE* partial = records_on_stdout ? stdout : a.out.empty() ? nullptr : std::fopen((a.out + ".partial").c_str(), "w");
  LoadReport report = run_load(cases, a.load, [&](const LoadRecord& r, int done) {
    if (partial) {
      std::fputs((r.to_json().dump() + "\n").c_str(), partial);
      std::fflush(partial);
    }
    fmt::print(human, "[load] {:>4}/{} {:<28} {:<20} {:>6.1f} s{}{}\n", done, a.load.count, r.case_name, r.lost ? "LOST" : r.status,
               r.latency_s(), r.attempts > 1 ? fmt::format(" (run {} times)", r.attempts) : "",
               r.mismatches.empty() ? "" : "  MISMATCH: " + r.mismatches.front());
    std::fflush(human);
  });
  if (partial && partial != stdout) std::fclose(partial);
  ordered_json summary = report.summary();
  if (!a.out.empty() && !records_on_stdout) {
    fs::remove(a.out + ".partial");
    std::string lines;
    for (const auto& r : report.records) lines += r.to_json().dump() + "\n";
    write_file_atomic(a.out, lines);
    write_file_atomic(a.out + ".summary.json", summary.dump(2) + "\n");
  }
  bool ok = report.all_as_expected() && summary["unstable_speedups"].empty() &&
            summary["distinct_task_ids"].get<std::size_t>() == report.records.size();
  if (a.json) {
    fmt::print("{}\n", summary.dump(2));
    return ok ? 0 : 1;
  }
  fmt::print(human, "{:<22} {:>6} {:>9} {:>9} {:>9} {:>10}\n", "status", "count", "p50 s", "p95 s", "max s", "eval p50 s");
  for (const auto& [status, s] : summary["by_status"].items())
    fmt::print(human, "{:<22} {:>6} {:>9.2f} {:>9.2f} {:>9.2f} {:>10.2f}\n", status, s["count"].get<int>(), s["p50_s"].get<double>(),
               s["p95_s"].get<double>(), s["max_s"].get<double>(), s["eval_p50_s"].get<double>());
  fmt::print(human, "{} of {} as expected, {} lost, {} distinct task ids, {} re-run by the service, {} resent; "
             "{:.1f} evaluations/min over {:.0f} s ({:.1f}/min steady)\n",
             summary["as_expected"].get<int>(), summary["submissions"].get<int>(), summary["lost"].get<int>(),
             summary["distinct_task_ids"].get<int>(), summary["rerun_by_service"].get<int>(), summary["resent_by_client"].get<int>(),
             summary["evaluations_per_minute"].get<double>(), summary["wall_s"].get<double>(),
             summary["steady_evaluations_per_minute"].get<double>());
  auto unstable = summary["unstable_speedups"].get<std::vector<std::string>>();
  if (unstable.empty())
    fmt::print(human, "speedups stable: every case's spread within {:.0f}%\n", 100 * LoadReport::kMaxSpeedupSpread);
  else
    fmt::print(human, "UNSTABLE speedups (spread over {:.0f}%): {}\n", 100 * LoadReport::kMaxSpeedupSpread, fmt::join(unstable, ", "));
  return ok ? 0 : 1;
}

}  // namespace

void register_suite(CLI::App& app, Action& action) {
  static Args a;
  auto* cmd = app.add_subcommand("suite", "candidate suites: kernels with the verdicts the evaluator must give");
  cmd->require_subcommand(1);
  auto* run = cmd->add_subcommand("run", "evaluate every case and compare with its expected verdict");
  run->add_option("suite", a.suite, "suite JSON (e.g. tests/fixtures/gemm/suite.json)")->required();
  run->add_option("--only", a.only, "case names to run (default: all)");
  add_eval_options(run, a.eval);
  run->footer("Exit 1 when a verdict differs from the one expected, 3 on an INFRA_ERROR verdict, 5 when every case\n"
              "was skipped. Without a usable GPU (none, or another architecture) a case whose verdict needs one is\n"
              "SKIPPED (no GPU); cases the compile stage decides (COMPILE_ERROR, BANNED_API, ABI_ERROR) are still\n"
              "checked. The summary line goes to stderr when stdout carries JSON (--json, --out -).");
  run->callback([&action] { action = [] { return run_suite(a); }; });
  static LoadArgs l;
  auto* load = cmd->add_subcommand("load", "submit suite cases to a running service from concurrent clients; check every verdict");
  load->add_option("suites", l.suites, "suite JSON files (cases of all are mixed)")->required();
  load->add_option("--service", l.load.service, "service URL, e.g. http://127.0.0.1:8742")->required();
  add_token_file_option(load, l.token_file);
  load->add_option("--count", l.load.count, "submissions")->check(CLI::PositiveNumber)->capture_default_str();
  load->add_option("--clients", l.load.clients, "concurrent clients")->check(CLI::PositiveNumber)->capture_default_str();
  load->add_option("--workload", l.load.workload, "workload uuid (default: each definition's default)");
  load->add_option("--key-prefix", l.load.key_prefix, "idempotency key prefix (default: from the clock)");
  load->add_option("--shuffle-seed", l.load.shuffle_seed, "order of cases within each round")->capture_default_str();
  load->add_option("--timeout", l.load.timeout_s, "seconds from submission to verdict before a task counts as lost")
      ->capture_default_str();
  load->add_option("--outage", l.load.outage_s, "seconds a client keeps retrying an unreachable service")->capture_default_str();
  load->add_option("--seed", l.seed, "input seed sent with every request (default: the service draws one)");
  load->add_option("--trials", l.trials, "correctness and timing trials sent with every request (default: the service's)");
  load->add_option("--out", l.out,
                   "write one JSON line per submission here, and the summary to OUT.summary.json; - prints the lines on "
                   "stdout as verdicts arrive (progress and summary go to stderr)");
  load->add_flag("--json", l.json, "print the summary (as in OUT.summary.json) as one JSON document; progress goes to stderr");
  load->footer("The suites' cases are mixed (a seeded shuffle per round) and submitted with idempotency keys; clients ride out\n"
               "a service restart (--outage). Exit 1 unless every verdict is as expected, no task is lost or twinned and every\n"
               "speedup is stable. scripts/service_load.sh wraps it with a kill -9 and restart of the service.");
  load->callback([&action] { action = [] { return run_suite_load(l); }; });

  auto* mat = cmd->add_subcommand("materialize", "write each case as a standalone file (.cu, or .py for Triton)");
  mat->add_option("suite", a.suite, "suite JSON")->required();
  mat->add_option("dir", a.dir, "output folder")->required();
  mat->add_flag("--json", a.json, "print the cases written as one JSON document (an array)");
  mat->callback([&action] {
    action = [] {
      CandidateSuite suite = load_suite(a.suite);
      prepare_output_dir("materialize DIR", a.dir);  // one file per case: a folder, never - (stdout)
      ordered_json written = ordered_json::array();
      for (const auto& c : suite.cases) {
        fs::path file = fs::path(a.dir) / (c.name + (c.language == CandidateLanguage::triton ? ".py" : ".cu"));
        write_file_atomic(file, c.source);
        if (a.json)
          written.push_back({{"name", c.name}, {"expected_status", to_string(c.expect.status)}, {"origin", c.origin},
                             {"file", file.string()}});
        else
          fmt::print("{:<28} {:<20} {}\n", c.name, to_string(c.expect.status), c.origin);
      }
      if (a.json) fmt::print("{}\n", written.dump(2));
      return 0;
    };
  });
}

}  // namespace ptxbench::cli

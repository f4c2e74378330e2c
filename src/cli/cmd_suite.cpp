// `ptxbench suite run|materialize SUITE`: evaluate a candidate suite and compare every verdict with
// the one expected (the main job for the bundled fixtures), or write its cases out as files.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/eval_args.h"
#include "common/fs.h"
#include "definitions/catalog.h"
#include "suite/candidate_suite.h"

namespace ptxbench::cli {
namespace {

struct Args {
  std::string suite, dir;
  std::vector<std::string> only;
  EvalArgs eval;
};

int run_suite(const Args& a) {
  CandidateSuite suite = load_suite(a.suite);
  Catalog catalog = Catalog::load(data_root());
  Evaluator evaluator(catalog, to_eval_options(a.eval));
  VerdictPrinter printer(a.eval, "expected");
  int wrong = 0, infra = 0, ran = 0;
  for (const auto& c : suite.cases) {
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), c.name) == a.only.end()) continue;
    for (int r = 0; r < a.eval.repeat; ++r) {
      Verdict v = evaluator.evaluate_source(suite.definition, a.eval.workload, c.source);
      ordered_json doc = v.to_json();
      auto problems = expectation_mismatches(c.expect, doc);
      if (v.status == Status::INFRA_ERROR) ++infra;
      if (!problems.empty()) ++wrong;
      ++ran;
      std::string note = problems.empty() ? "ok (" + c.expect.status + ")" : "MISMATCH: " + problems.front();
      printer.print(c.name + (a.eval.repeat > 1 ? "." + std::to_string(r + 1) : ""), doc, note);
    }
  }
  if (!a.eval.json) fmt::print("{} of {} verdicts as expected\n", ran - wrong, ran);
  return infra ? 3 : (wrong ? 1 : 0);
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
  run->callback([&action] { action = [] { return run_suite(a); }; });
  auto* mat = cmd->add_subcommand("materialize", "write each case as a standalone .cu file");
  mat->add_option("suite", a.suite, "suite JSON")->required();
  mat->add_option("dir", a.dir, "output folder")->required();
  mat->callback([&action] {
    action = [] {
      CandidateSuite suite = load_suite(a.suite);
      for (const auto& c : suite.cases) {
        write_file_atomic(fs::path(a.dir) / (c.name + ".cu"), c.source);
        fmt::print("{:<28} {:<20} {}\n", c.name, c.expect.status, c.origin);
      }
      return 0;
    };
  });
}

}  // namespace ptxbench::cli

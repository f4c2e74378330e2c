// The default report of the original PTXBench's imported release against the paper's printed
// cells (issue 33): the paper's rule for missing turns (not correct) and one row per experiment of
// an imported run. Offline on tests/fixtures/original/release_extract.csv (release rows kept as they
// are; its README says which); where the original's repository is mirrored, also every experiment
// of the whole release against the release's own per-experiment series.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>

#include "runs/import_original.h"
#include "common/fs.h"
#include "report/report_data.h"
#include "report/report_format.h"
#include "report/report_text.h"

using namespace ptxbench;
using namespace ptxbench::report;

namespace {

const fs::path kExtract = fs::path(PTXBENCH_TEST_DATA) / "fixtures" / "original" / "release_extract.csv";

const Group& experiment_group(const Report& r, const std::string& definition, const std::string& experiment) {
  for (const auto& g : r.groups)
    if (g.definition == definition && g.experiment == experiment) return g;
  throw std::runtime_error("no group " + definition + " / " + experiment);
}

// Table 1 under a rule at T = 1 / 4 / 8, as the tables print it.
std::string table1(const GroupMetrics& g, InstructionRule rule) { return budget_values(g, budget_tables()[0], rule); }

struct Imported {
  TempDir dir{"report_paper"};
  RunStore store{(dir.path() / "runs.db").string()};
  std::vector<std::string> runs;
  explicit Imported(const std::string& csv) {
    for (const auto& r : import_original_csv(store, csv).runs) runs.push_back(r.run_id);
  }
};

}  // namespace

// Gemini 3.1 Pro on the H100, MHA backward: the paper prints 8.3 / 33.3 / 38.5 (the same value
// under the target-instruction rule and unrestricted). The run holds three experiments of that
// definition; pooled they read 1.8 / 17.4 / 19.4, so each is its own row by default.
TEST(ReportPaper, GeminiBackwardRowIsThePapersCell) {
  Imported imp(kExtract.string());
  ASSERT_EQ(imp.runs.size(), 2u);
  Report r = build_report(imp.store, imp.runs, ReportOptions{});
  const std::string bwd = "mha_bwd_d128";
  int rows = 0;
  for (const auto& g : r.groups) rows += g.model == "Gemini 3.1 Pro" && g.definition == bwd;
  EXPECT_EQ(rows, 3) << "one row per experiment";
  const Group& main = experiment_group(r, bwd, "gemini-31-pro-mha-bwd-d128");
  EXPECT_EQ(main.metrics.counted, 12);
  EXPECT_EQ(main.gpu, "NVIDIA H100");
  EXPECT_EQ(table1(main.metrics, InstructionRule::paper), "8.3 / 33.3 / 38.5");
  EXPECT_EQ(table1(main.metrics, InstructionRule::unrestricted), "8.3 / 33.3 / 38.5");
  EXPECT_EQ(experiment_group(r, bwd, "2026-0609-2240").metrics.counted, 20);
  EXPECT_EQ(experiment_group(r, bwd, "gemini-31-pro-prompt-ablation-mha-bwd-d128").metrics.counted, 24);

  // What the report gave before it split imported runs: the three experiments pooled.
  std::vector<TrajectoryObs> all;
  for (const auto& g : r.groups)
    if (g.model == "Gemini 3.1 Pro")
      for (auto i : g.members) all.push_back(r.trajectories[i].obs);
  EXPECT_EQ(table1(group_metrics(all, r.budgets), InstructionRule::paper), "1.8 / 17.4 / 19.4");

  // The terminal shows the experiment beside the definition, and the strict rule as unknown.
  std::string text = render_text(r);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(Gemini 3\.1 Pro +mha_bwd_d128 +gemini-31-pro-mha-bwd-d128 +NVIDIA H100 +12 +)"
                                                 R"(target-instr\. +8\.3 \[0\.0, 25\.0\] +33\.3 \[[0-9.]+, [0-9.]+\] +38\.5 \[)")))
      << text;
  EXPECT_NE(text.find("Experiment"), std::string::npos);
  EXPECT_EQ(text.find("0.0*"), std::string::npos) << "an unknown strict value is n/a, never a lower bound of 0";
  EXPECT_NE(render_text(r, TextDetail::full).find("strict "), std::string::npos);
  EXPECT_TRUE(main.metrics.budgets[2].strict_unknown_only());
  EXPECT_EQ(budget_values(main.metrics, budget_tables()[0], InstructionRule::strict), "n/a / n/a / n/a");
}

// Qwen3.6-27B + retrieved repair notes and fixed kernel, MHA-Bwd-Causal at T = 8: the paper
// prints 33.3 (37.5). Three of its 12 trajectories are short (95 + 1 turns missing of 96); the
// paper counts the missing turns as not correct: 37.5 unrestricted, as printed. Carrying the last
// verdict forward gave 35.4 (38.5).
TEST(ReportPaper, NotesAndKernelCausalBackwardAtEightTurns) {
  Imported imp(kExtract.string());
  Report r = build_report(imp.store, imp.runs, ReportOptions{});
  const Group& g = experiment_group(r, "mha_bwd_d128_causal", "qwen36-27b-note-feedback2-3prompt-mha-bwd-d128-causal");
  EXPECT_EQ(g.model, "Qwen3.6-27B + retrieved repair notes and fixed kernel");
  const BudgetMetrics& t8 = g.metrics.budgets[2];
  ASSERT_EQ(t8.budget, 8);
  EXPECT_EQ(t8.slots, 96) << "12 trajectories x 8";
  EXPECT_EQ(t8.missing_slots, 6);
  EXPECT_EQ(format_number(100.0 * *t8.correctness_rate, 1), "37.5") << "the paper's unrestricted value";
  // Under the paper's target-instruction rule the release's per-turn rows give 33 of 96 = 34.4,
  // one turn above the paper's 32 of 96 = 33.3: correct_with_arch credits exp_010's turn 2
  // (arch_tag "A, H"), which the release's dynamically verified series does not
  // (arch_instruction_correctness_by_release_date.csv: 9 trajectories with a target-instruction
  // correct turn at T = 8, where the per-turn rows give 10). Without that one turn the cell is the
  // paper's exactly.
  EXPECT_EQ(t8.target_slots, 33);
  std::vector<TrajectoryObs> obs;
  for (auto i : g.members) {
    TrajectoryObs o = r.trajectories[i].obs;
    if (r.trajectories[i].info.key.index == 10) {
      ASSERT_GE(o.turns.size(), 2u);
      EXPECT_TRUE(o.turns[1].target);
      o.turns[1].target = false;
    }
    obs.push_back(o);
  }
  const BudgetMetrics verified = budget_metrics(obs, 8);
  EXPECT_EQ(format_number(100.0 * *verified.target_rate, 1), "33.3") << "the paper's target-instruction value";
  EXPECT_EQ(format_number(100.0 * *verified.correctness_rate, 1), "37.5");

  ReportOptions carry;
  carry.missing = MissingTurns::carry_forward;
  Report c = build_report(imp.store, imp.runs, carry);
  const GroupMetrics& cg = experiment_group(c, "mha_bwd_d128_causal", "qwen36-27b-note-feedback2-3prompt-mha-bwd-d128-causal").metrics;
  EXPECT_EQ(format_number(100.0 * *cg.budgets[2].target_rate, 1), "35.4");
  EXPECT_EQ(format_number(100.0 * *cg.budgets[2].correctness_rate, 1), "38.5");
  // Each output names the rule it used.
  EXPECT_NE(render_text(r).find("missing turns count as not correct (the paper's rule"), std::string::npos);
  EXPECT_NE(render_text(c).find("missing turns carry the last verdict forward (--carry-forward"), std::string::npos);
}

// The whole release, where the original's repository is mirrored (PTXBENCH_ORIGINAL_REPO, default
// /work/.mirror/zhang677+PTXBench/repo): for each of its 105 experiments at T = 1, 4, 8 the default
// report's row gives the release's own series — Table 9 (best speedup, max) = best_speedup_by_release_date.csv,
// pass@1 (the share of trajectories with a correct turn within T) = correctness_rate_by_release_date.csv,
// and pass@1 under the paper's rule = the dynamically verified arch_instruction_correctness_by_release_date.csv
// except its 4 rows that disagree with the per-turn flags (two experiments of the notes-and-kernel
// model and one of Qwen3.6-27B-s1, docs/report.md).
TEST(ReportPaper, WholeReleaseMatchesItsPerExperimentSeries) {
  const char* env = std::getenv("PTXBENCH_ORIGINAL_REPO");
  std::string repo = env && *env ? env : "/work/.mirror/zhang677+PTXBench/repo";
  if (!fs::exists(repo)) GTEST_SKIP() << "no mirror of the original PTXBench at " << repo;
  TempDir dir("report_paper_release");
  auto show = [&](const std::string& file) {
    fs::path out = dir.path() / fs::path(file).filename();
    std::string cmd = "git -C '" + repo + "' show HEAD:benchmark/plot_viewer_v1/data/" + file + " > '" + out.string() + "' 2>/dev/null";
    if (std::system(cmd.c_str()) != 0 || fs::file_size(out) == 0) return std::string();
    return out.string();
  };
  std::string turns = show("reasoning_tokens_vs_performance.csv"), best = show("best_speedup_by_release_date.csv"),
              rate = show("correctness_rate_by_release_date.csv"), arch = show("arch_instruction_correctness_by_release_date.csv");
  if (turns.empty() || best.empty() || rate.empty() || arch.empty()) GTEST_SKIP() << "cannot read the release's CSVs from " << repo;
  Imported imp(turns);
  Report r = build_report(imp.store, imp.runs, ReportOptions{});

  // (model, gpu, definition, experiment) -> group.
  std::map<std::string, const Group*> by_key;
  for (const auto& g : r.groups)
    if (!g.pooled) by_key[g.model + "\n" + g.gpu + "\n" + g.definition + "\n" + g.experiment] = &g;
  auto group_of = [&](const std::map<std::string, std::string>& row) -> const Group* {
    std::string exp = row.at("exp_dir");
    exp = exp.substr(exp.rfind('/') + 1);
    auto it = by_key.find(row.at("model") + "\n" + *original_arch_gpu(row.at("arch")) + "\n" + row.at("definition") + "\n" + exp);
    return it == by_key.end() ? nullptr : it->second;
  };
  auto rows_of = [](const std::string& file) {
    auto recs = parse_csv(read_file(file), file);
    std::vector<std::map<std::string, std::string>> rows;
    for (std::size_t i = 1; i < recs.size(); ++i) {
      std::map<std::string, std::string> row;
      for (std::size_t c = 0; c < recs[0].fields.size() && c < recs[i].fields.size(); ++c) row[recs[0].fields[c]] = recs[i].fields[c];
      rows.push_back(row);
    }
    return rows;
  };
  auto at_budget = [&](const Group& g, int T) -> const BudgetMetrics& {
    for (const auto& m : g.metrics.budgets)
      if (m.budget == T) return m;
    throw std::runtime_error("no budget");
  };
  int checked = 0;
  for (const auto& row : rows_of(best)) {
    const Group* g = group_of(row);
    ASSERT_NE(g, nullptr) << row.at("exp_dir");
    const BudgetMetrics& m = at_budget(*g, std::stoi(row.at("turn_limit")));
    EXPECT_EQ(m.trajectories, std::stoll(row.at("n_trajectories"))) << row.at("exp_dir");
    double expected = std::stod(row.at("best_speedup"));
    if (expected == 0.0) EXPECT_FALSE(m.max_best) << row.at("exp_dir");
    else EXPECT_NEAR(m.max_best.value_or(-1.0), expected, 1e-6) << row.at("exp_dir") << " T = " << m.budget;
    ++checked;
  }
  EXPECT_EQ(checked, 315);
  for (const auto& row : rows_of(rate)) {
    const Group* g = group_of(row);
    ASSERT_NE(g, nullptr);
    const BudgetMetrics& m = at_budget(*g, std::stoi(row.at("turn_limit")));
    EXPECT_EQ(m.passed, std::stoll(row.at("correct"))) << row.at("exp_dir") << " T = " << m.budget;
    EXPECT_NEAR(*m.pass_at(1, InstructionRule::unrestricted), std::stod(row.at("correctness_rate")), 1e-6);
  }
  int disagree = 0;
  for (const auto& row : rows_of(arch)) {
    const Group* g = group_of(row);
    ASSERT_NE(g, nullptr);
    disagree += at_budget(*g, std::stoi(row.at("turn_limit"))).passed_target != std::stoll(row.at("correct_with_arch"));
  }
  EXPECT_EQ(disagree, 4) << "the release's per-turn flags and its verified series differ in 4 of 315 rows";
}

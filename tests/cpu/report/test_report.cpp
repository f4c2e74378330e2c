// `ptxbench report` over run stores: one written through the RunStore API with hand-counted
// numbers (groups, missing turns under the paper's rule and carried forward, INFRA_ERROR, missing
// SASS data, token ratios, every output format, escaping of model text, filters, the tidy CSV and
// its side file), the strict target-instruction rule beside the paper's, the
// provenance marks (fake-backend verdicts refused unless allowed, then marked everywhere;
// evaluation options off their defaults), and one made by a real agent run (fake model provider,
// local service with fake GPUs) reported through the command line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <regex>
#include <sstream>

#include "agent/agent_run.h"
#include "agent/run_config.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "report/report_data.h"
#include "report/report_export.h"
#include "report/report_format.h"
#include "report/report_html.h"
#include "report/report_text.h"
#include "service/http_server.h"
#include "test_report_support.h"

using namespace ptxbench;
using namespace ptxbench::report;
using namespace ptxbench::test;

namespace {

const Group& find_group(const Report& r, const std::string& run, const std::string& definition) {
  for (const auto& g : r.groups)
    if (g.run_id == run && g.definition == definition) return g;
  throw std::runtime_error("no group " + run + " " + definition);
}

// A CSV row's provenance column with its leading comma (",fake_backend", ","): the last field.
std::string provenance_of(const std::string& row) { return row.substr(row.rfind(',')); }

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(ReportFromStore, HandCountedMetrics) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  SampleRuns runs = build_sample_runs(store);
  Report r = build_report(store, {runs.agent, runs.refinement}, {1, 4, 8});
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].num_turns, 4);
  ASSERT_EQ(r.groups.size(), 4u) << "agent: gemm, attn, (all); refinement: gemm";

  const Group& gemm = find_group(r, runs.agent, "gemm_n7168_k5120");
  EXPECT_EQ(gemm.gpu, "NVIDIA H200");
  EXPECT_EQ(gemm.metrics.counted, 3);
  const auto& t1 = gemm.metrics.budgets[0];
  const auto& t4 = gemm.metrics.budgets[1];
  const auto& t8 = gemm.metrics.budgets[2];
  EXPECT_EQ(t1.slots, 2) << "the INFRA_ERROR first turn of #2 is excluded";
  EXPECT_DOUBLE_EQ(*t1.correctness_rate, 0.0);
  // T=4, the paper's rule: #0 X C _ _ (1, target 1: stopped early, its missing turns are not
  // correct); #1 E N C C (2, target 1: turn 3 has no SASS data); #2 I S K R (0 of 3).
  EXPECT_EQ(t4.slots, 11);
  EXPECT_EQ(t4.infra_slots, 1);
  EXPECT_EQ(t4.missing_slots, 2);
  EXPECT_EQ(t4.carried_slots, 0);
  EXPECT_DOUBLE_EQ(*t4.correctness_rate, 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(*t4.target_rate, 2.0 / 11.0);
  EXPECT_EQ(t4.passed, 2);
  EXPECT_EQ(t4.passed_target, 2);
  EXPECT_DOUBLE_EQ(*t4.max_best, 1.5);
  EXPECT_DOUBLE_EQ(*t4.median_best, 1.3);
  EXPECT_DOUBLE_EQ(*t4.median_best_target, 1.3);
  EXPECT_FALSE(t8.measured) << "num_turns 4";
  EXPECT_EQ(budget_cell(gemm.metrics, budget_tables()[0]), "0.0 / 18.2 / n/a (0.0 / 27.3 / n/a)");
  EXPECT_EQ(budget_cell(gemm.metrics, budget_tables()[1]), "- / 1.500 / n/a (- / 1.500 / n/a)");
  EXPECT_EQ(budget_cell(gemm.metrics, budget_tables()[2]), "- / 1.300 [n=2] / n/a (- / 1.300 [n=2] / n/a)")
      << "the median of #0's 1.5 and #1's 1.1 (#2 has no best), with its n";
  const auto& labels = gemm.metrics.labels.total;
  EXPECT_EQ(labels[label_index(TurnLabel::correct)], 3);
  EXPECT_EQ(labels[label_index(TurnLabel::sanitize_timeout)], 1);
  EXPECT_EQ(labels[label_index(TurnLabel::kernel_timeout)], 1);
  EXPECT_EQ(labels[label_index(TurnLabel::extraction_error)], 1);
  EXPECT_EQ(labels[label_index(TurnLabel::infra_error)], 1);
  EXPECT_EQ(gemm.metrics.transitions.counts[label_index(TurnLabel::infra_error)][label_index(TurnLabel::sanitize_timeout)], 1);
  EXPECT_EQ(gemm.metrics.tokens.total.total(), 10 * 1200);

  const Group& pooled = find_group(r, runs.agent, kPooledDefinition);
  EXPECT_EQ(pooled.metrics.counted, 4);
  // T=4 pooled: gemm 3 (target 2) of 11, attn's C _ _ _ 1 of 4: 4/15 and 3/15.
  EXPECT_EQ(budget_cell(pooled.metrics, budget_tables()[0]), "33.3 / 20.0 / n/a (33.3 / 26.7 / n/a)");
  ASSERT_EQ(gemm.intervals.size(), 3u) << "one per budget";
  ASSERT_TRUE(gemm.intervals[1].rate_of(InstructionRule::paper));
  EXPECT_LE(gemm.intervals[1].rate_of(InstructionRule::paper)->lower, 2.0 / 11.0);
  EXPECT_GE(gemm.intervals[1].rate_of(InstructionRule::paper)->upper, 2.0 / 11.0);

  // --carry-forward: #0's correct turn 2 fills its slots 3 and 4 (and attn's its 2 to 4).
  ReportOptions carry;
  carry.missing = MissingTurns::carry_forward;
  Report c = build_report(store, {runs.agent, runs.refinement}, carry);
  EXPECT_EQ(c.missing, MissingTurns::carry_forward);
  const Group& cg = find_group(c, runs.agent, "gemm_n7168_k5120");
  EXPECT_EQ(cg.metrics.budgets[1].carried_slots, 2);
  EXPECT_EQ(budget_cell(cg.metrics, budget_tables()[0]), "0.0 / 36.4 / n/a (0.0 / 45.5 / n/a)");
  EXPECT_EQ(budget_cell(find_group(c, runs.agent, kPooledDefinition).metrics, budget_tables()[0]), "33.3 / 53.3 / n/a (33.3 / 60.0 / n/a)");
  EXPECT_EQ(budget_cell(cg.metrics, budget_tables()[1]), budget_cell(gemm.metrics, budget_tables()[1])) << "bests use the turns run";

  const Group& refine = find_group(r, runs.refinement, "gemm_n7168_k5120");
  EXPECT_EQ(refine.gpu, "NVIDIA H200") << "the extraction-only trajectory takes its run's GPU";
  EXPECT_EQ(refine.members.size(), 2u);

  ASSERT_EQ(r.comparisons.size(), 2u) << "gemm (both ran it) and (all)";
  EXPECT_EQ(r.comparisons[0].definition, "gemm_n7168_k5120");
  // Medians of cumulative tokens: agent gemm 2400, 4800, 4800 -> 4800; refinement 1200, 2400 -> 1800.
  EXPECT_NEAR(*r.comparisons[0].ratio.total, 4800.0 / 1800.0, 1e-12);
  EXPECT_EQ(r.comparisons[1].definition, kPooledDefinition);
  // Pooled, the agent adds attn's 1200: 1200, 2400, 4800, 4800 -> 3600.
  EXPECT_NEAR(*r.comparisons[1].ratio.total, 3600.0 / 1800.0, 1e-12);
  // Reasoning by turn (50 per call): gemm turns 1-2 have 3 calls, turns 3-4 two (#0 stopped at 2).
  ASSERT_EQ(gemm.metrics.reasoning.size(), 4u);
  EXPECT_EQ(gemm.metrics.reasoning[0].calls, 3);
  EXPECT_EQ(gemm.metrics.reasoning[2].calls, 2);
  EXPECT_DOUBLE_EQ(gemm.metrics.reasoning[3].median, 50.0);

  EXPECT_THROW(build_report(store, {"nope"}, {1}), InputError);
  EXPECT_THROW(build_report(store, {runs.agent}, {0}), InputError);
  EXPECT_THROW(build_report(store, {}, {1}), InputError);
  // A unique prefix names a run.
  EXPECT_EQ(build_report(store, {runs.agent.substr(0, runs.agent.size() - 1)}, {1}).runs.size(), 1u);
}

TEST(ReportFromStore, OutputsStateTheDefinitionsAndEscapeModelText) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  SampleRuns runs = build_sample_runs(store);
  Report r = build_report(store, {runs.agent, runs.refinement}, {1, 4, 8});

  // The default terminal report: the paper's Table 1 and Table 9, a row per group and rule, a
  // column per T with the bootstrap interval, the rule for missing turns named in each title.
  std::string text = render_text(r);
  EXPECT_NE(text.find("Table 1. Turn correctness rate (%) at T = 1 / 4 / 8; missing turns count as not correct (the paper's rule"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Table 9. Best speedup (max over trajectories) (x) at T = 1 / 4 / 8; missing turns count as not correct"),
            std::string::npos)
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(R1 +model-a +gemm_n7168_k5120 +NVIDIA H200 +3 +target-instr\. +0\.0 \[0\.0, 0\.0\] +18\.2 \[[0-9.]+, [0-9.]+\] +n/a)")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\n +unrestricted +0\.0 \[0\.0, 0\.0\] +27\.3 \[[0-9.]+, [0-9.]+\] +n/a)"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(target-instr\. +- +1\.500 \[[0-9.]+, 1\.500\] +n/a)"))) << text;
  EXPECT_EQ(text.find("Table 2"), std::string::npos) << "the paper's numbers only";
  EXPECT_FALSE(std::regex_search(text, std::regex(R"(\(all\) +NVIDIA)"))) << "per model x definition; the pooled rows are in --full";
  EXPECT_EQ(text.find("Token ratio"), std::string::npos) << "in --full";
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 60) << text;

  std::string full = render_text(r, TextDetail::full);
  EXPECT_NE(full.find("Missing turns"), std::string::npos);
  EXPECT_NE(full.find("Sanitize timeout"), std::string::npos);
  EXPECT_NE(full.find("Token ratio"), std::string::npos);
  EXPECT_NE(full.find("2.667"), std::string::npos) << "gemm total-token ratio of medians 4800/1800";
  EXPECT_NE(full.find("Reasoning tokens by turn"), std::string::npos);
  EXPECT_NE(full.find("pass@4"), std::string::npos);
  EXPECT_TRUE(std::regex_search(full, std::regex(R"(model-a +\(all\) +NVIDIA H200 +4 +target-instr\. +33\.3 )"))) << full;

  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["schema"], kReportSchema);
  EXPECT_EQ(j["schema_version"], 4);
  EXPECT_EQ(j["missing_turns"]["rule"], "not_correct");
  EXPECT_EQ(j["bootstrap"]["resamples"], 1000);
  EXPECT_EQ(j["definitions"].size(), metric_definitions().size());
  EXPECT_TRUE(j["definitions"].contains("missing_turns"));
  EXPECT_TRUE(j["definitions"].contains("pass_at_k"));
  EXPECT_EQ(j["groups"].size(), 4u);
  const auto& g0 = j["groups"][0];
  EXPECT_EQ(g0["definition"], "gemm_n7168_k5120");
  EXPECT_TRUE(g0["experiment"].is_null()) << "a measured run";
  EXPECT_NEAR(g0["budgets"][1]["turn_correctness_rate"].get<double>(), 3.0 / 11.0, 1e-12);
  EXPECT_EQ(g0["budgets"][1]["missing_turns"], "not_correct");
  EXPECT_EQ(g0["budgets"][1]["missing_slots"], 2);
  ASSERT_EQ(g0["budgets"][1]["turn_correctness_rate_interval"].size(), 2u);
  EXPECT_LE(g0["budgets"][1]["turn_correctness_rate_interval"][0].get<double>(), 3.0 / 11.0);
  EXPECT_EQ(g0["budgets"][1]["best_target_speedup"]["max_interval"][1], 1.5);
  EXPECT_EQ(g0["budgets"][1]["fast_inst_p"]["lower"].size(), fast_p_grid().size());
  EXPECT_NEAR(g0["budgets"][1]["pass_at_k"]["target_pass_at_k"]["at"]["1"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_TRUE(g0["budgets"][1]["pass_at_k"]["pass_at_k"]["at"]["4"].is_null()) << "k = 4 above n = 3";
  EXPECT_EQ(g0["budgets"][2]["measured"], false);
  EXPECT_EQ(g0["budgets"][1]["per_trajectory"].size(), 3u);
  EXPECT_EQ(g0["turn_labels"]["total"]["Infra error (excluded)"], 1);
  EXPECT_EQ(j["trajectories"].size(), 6u);
  EXPECT_EQ(j["comparisons"].size(), 2u);

  // The tidy CSV: no definition text on its rows; the definitions in the side file.
  std::string csv = report_csv(r);
  EXPECT_EQ(csv.rfind("run,model,definition,experiment,tag,gpu,language,trajectories,metric,budget,p,k,label,to_label,other_run,value,"
                      "lower,upper,missing_turns,provenance\n", 0),
            0u);
  const std::string gemm_key = runs.agent + ",model-a,gemm_n7168_k5120,,,NVIDIA H200,cuda,3,";
  EXPECT_NE(csv.find(gemm_key + "turn_correctness_rate,4,,,,,,0.272727,"), std::string::npos) << csv;
  EXPECT_TRUE(std::regex_search(csv, std::regex(gemm_key + R"(target_correctness_rate,4,,,,,,0\.181818,[0-9.]+,[0-9.]+,not_correct,\n)")));
  EXPECT_NE(csv.find(gemm_key + "tokens_total_median_per_trajectory,,,,,,,4800,,,not_correct,"), std::string::npos);
  EXPECT_NE(csv.find(gemm_key + "reasoning_tokens_by_turn_calls,,,,turn 3,,,2,"), std::string::npos);
  EXPECT_NE(csv.find(gemm_key + "fast_p,4,1.2,,,,,0.333333,"), std::string::npos) << "bests 1.5, 1.1, none";
  EXPECT_NE(csv.find(gemm_key + "fast_p,4,1.5,,,,,0,0,0,"), std::string::npos) << "strict: 1.5 is not > 1.5";
  EXPECT_NE(csv.find(gemm_key + "target_pass_at_k,4,,1,,,,0.666667,"), std::string::npos);
  EXPECT_NE(csv.find("transition_count,,,,Infra error (excluded),Sanitize timeout,,1,"), std::string::npos);
  EXPECT_EQ(csv.find(definition_text("fast_p")), std::string::npos) << "no definition text repeated on the rows";
  EXPECT_EQ(csv.find("Strictly"), std::string::npos);
  std::string side = report_csv_metrics(r);
  EXPECT_EQ(side.rfind("metric,definition,name,text\n", 0), 0u);
  EXPECT_NE(side.find("\nfast_inst_p,fast_p,Fast_p and Fast^Inst_p,"), std::string::npos) << side;
  EXPECT_NE(side.find("\ntarget_pass_at_k,pass_at_k,pass@k,"), std::string::npos) << side;
  EXPECT_NE(side.find("\nmissing_turns,missing_turns,"), std::string::npos) << side;
  EXPECT_EQ(count(side, "\nturn_correctness_rate,"), 1u) << "each metric once";
  EXPECT_EQ(metrics_csv_path("out/report.csv"), "out/report.metrics.csv");
  EXPECT_EQ(metrics_csv_path("out/report"), "out/report.metrics.csv");
  EXPECT_EQ(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");

  std::string html = render_html(r);
  EXPECT_EQ(html.find("<script>document.title"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_EQ(html.find("</script><script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(count(html, "<script"), 2u) << "the JSON data block and our own script, nothing else";
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  for (const char* fetch : {"src=\"http", "href=\"http", "src=http", "url(http", "@import"})
    EXPECT_EQ(html.find(fetch), std::string::npos) << "nothing to fetch: " << fetch;
  EXPECT_NE(html.find("class=\"transition-heatmap\""), std::string::npos);
  EXPECT_NE(html.find("Missing turns"), std::string::npos);
  EXPECT_NE(html.find("id=\"pass-at-k\""), std::string::npos);
  EXPECT_LT(html.find("id=\"fastp-charts\""), html.find("id=\"table-turn_correctness\"")) << "figures first";
  EXPECT_LT(html.find("id=\"table-turn_correctness\""), html.find("id=\"runs\""));
  EXPECT_EQ(html_escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(json_for_script({{"k", "</script><!--&"}}), "{\"k\":\"\\u003c/script\\u003e\\u003c!--\\u0026\"}");
}

namespace {

// The terminal report with its wrapped lines joined again (wrap() indents continuations by two).
std::string unwrap(std::string text) {
  for (auto p = text.find("\n  "); p != std::string::npos; p = text.find("\n  ", p)) text.replace(p, 3, " ");
  return text;
}

// Data rows of a report CSV whose group is `definition`.
std::vector<std::string> csv_rows(const std::string& csv, const std::string& definition) {
  std::vector<std::string> rows;
  std::size_t start = csv.find('\n') + 1;
  while (start < csv.size()) {
    std::size_t end = csv.find('\n', start);
    std::string line = csv.substr(start, end - start);
    // Rows of the runs' groups (and token ratios); the per-language rows (empty run) pool runs.
    if (line.find("," + definition + ",") != std::string::npos && line.rfind(",", 0) != 0) rows.push_back(line);
    start = end + 1;
  }
  return rows;
}

}  // namespace

TEST(ReportFromStore, StrictRuleBesideThePapersFromStoredVerdicts) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  std::string run = store.create_run({{"policy", "model"}, {"num_turns", 1}}, "model-s", "strict");
  const std::string gemm = "gemm_n7168_k5120";
  ScriptedTurn covered{"PASSED", 1.5, true}, token_wgmma{"PASSED", 1.6, true}, old{"PASSED", 1.4, true};
  covered.coverage = 0.97;      // paper rule and strict rule
  token_wgmma.coverage = 0.02;  // one wgmma beside a SIMT loop: paper rule yes, strict no
  // `old` has no strict verdict, like the verdicts stored before the field existed.
  add_trajectory(store, run, {gemm, "", "params", 0}, {covered}, finished());
  add_trajectory(store, run, {gemm, "", "params", 1}, {token_wgmma}, finished());
  add_trajectory(store, run, {gemm, "", "params", 2}, {old}, finished());
  Report r = build_report(store, {run}, {1});
  const Group& g = find_group(r, run, gemm);
  const auto& m = g.metrics.budgets[0];
  EXPECT_DOUBLE_EQ(*m.target_rate, 1.0);
  EXPECT_DOUBLE_EQ(*m.strict_rate, 1.0 / 3.0) << "only the covered turn; the old one is unknown, not strict";
  EXPECT_EQ(m.strict_unknown_slots, 1);
  EXPECT_EQ(g.metrics.strict_unknown_turns, 1);
  EXPECT_DOUBLE_EQ(fast_p(m.best_target, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(fast_p(m.best_strict, 1.0), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(*m.max_best_target, 1.6);
  EXPECT_DOUBLE_EQ(*m.max_best_strict, 1.5) << "the 1.6x turn fails the strict rule";

  // The strict cell's interval: its random stream is named after the run (whose id holds the
  // clock), so with three trajectories its upper bound is 66.7 or 100; every format shows the same.
  ASSERT_FALSE(g.intervals.empty());
  const auto& strict_iv = g.intervals[0].rate_of(InstructionRule::strict);
  ASSERT_TRUE(strict_iv.has_value());
  EXPECT_DOUBLE_EQ(strict_iv->lower, 0.0);
  EXPECT_TRUE(std::abs(strict_iv->upper - 2.0 / 3.0) < 1e-9 || strict_iv->upper == 1.0) << strict_iv->upper;
  const std::string strict_upper = fmt::format("{:.1f}", 100.0 * strict_iv->upper);
  const std::string strict_upper_csv = strict_iv->upper == 1.0 ? "1" : "0.666667";

  std::string text = render_text(r, TextDetail::full);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(target-instr\. +100\.0 \[100\.0, 100\.0\]\n)"))) << "the paper's cell: " << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\n +strict +33\.3 \[0\.0, )" + strict_upper + R"(\]\*\n)"))) << text;
  EXPECT_NE(unwrap(text).find("strict rule unknown for 1 of 3 correct turns"), std::string::npos) << text;
  EXPECT_FALSE(std::regex_search(render_text(r), std::regex(R"(\n +strict +)"))) << "the default shows the paper's rule and the unrestricted one";

  std::string csv = report_csv(r);
  const std::string key = run + ",model-s," + gemm + ",,,NVIDIA H200,cuda,3,";
  EXPECT_NE(csv.find(key + "fast_inst_p,1,1,,,,,1,1,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(key + "fast_inst_strict_p,1,1,,,,,0.333333,0," + strict_upper_csv + ","), std::string::npos) << csv;
  EXPECT_NE(csv.find(key + "strict_correctness_rate,1,,,,,,0.333333,0," + strict_upper_csv + ","), std::string::npos) << csv;
  EXPECT_NE(csv.find(key + "strict_unknown_turns,,,,,,,1,"), std::string::npos);

  ordered_json j = ordered_json::parse(report_json(r).dump());
  const auto& b = j["groups"][0]["budgets"][0];
  EXPECT_DOUBLE_EQ(b["target_correctness_rate"].get<double>(), 1.0);
  EXPECT_NEAR(b["strict_correctness_rate"].get<double>(), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(b["strict_unknown_slots"], 1);
  EXPECT_DOUBLE_EQ(b["best_strict_speedup"]["max"].get<double>(), 1.5);
  EXPECT_EQ(j["groups"][0]["strict_unknown_turns"], 1);
  EXPECT_EQ(j["trajectories"][0]["turns"][0]["strict_target_instruction"], true);
  EXPECT_EQ(j["trajectories"][1]["turns"][0]["strict_target_instruction"], false);
  EXPECT_TRUE(j["trajectories"][2]["turns"][0]["strict_target_instruction"].is_null()) << "unknown";
  EXPECT_DOUBLE_EQ(j["trajectories"][1]["turns"][0]["tensor_core_coverage"].get<double>(), 0.02);

  std::string html = render_html(r);
  EXPECT_NE(html.find("strict: 33.3 [0.0, " + strict_upper + "]*"), std::string::npos);
  EXPECT_NE(html.find("unknown"), std::string::npos);
}

TEST(ReportFromStore, FakeBackendVerdictsAreRefusedUnlessAllowedThenMarkedEverywhere) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  const std::string gemm = "gemm_n7168_k5120", attn = "mha_with_lse_d128";
  std::string real = store.create_run({{"policy", "model"}, {"num_turns", 1}}, "model-r", "real");
  add_trajectory(store, real, {gemm, "", "params", 0}, {{"PASSED", 1.5, true}}, finished());
  std::string faked = store.create_run({{"policy", "model"}, {"num_turns", 2}}, "model-f", "fake");
  ScriptedTurn fake_x{"COMPILE_ERROR"}, fake_c{"PASSED", 1.3, true};
  fake_x.fake = fake_c.fake = true;
  add_trajectory(store, faked, {gemm, "", "params", 0}, {fake_x, fake_c}, finished());
  add_trajectory(store, faked, {attn, "", "params", 0}, {{"PASSED", 1.1, true}}, finished());

  // Real verdicts only: reported, no mark.
  Report plain = build_report(store, {real}, {1});
  EXPECT_FALSE(plain.provenance.fake());
  EXPECT_EQ(render_text(plain).find("FAKE BACKEND"), std::string::npos);
  EXPECT_EQ(render_html(plain).find("class=\"bad fake-banner\""), std::string::npos);

  // Any fake verdict: refused, naming the run, the count and the way out.
  for (const auto& runs : {std::vector<std::string>{faked}, std::vector<std::string>{real, faked}}) {
    try {
      build_report(store, runs, {1});
      ADD_FAILURE() << "fake-backend verdicts were reported without --allow-fake";
    } catch (const InputError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(faked + " (2 of 3 verdicts)"), std::string::npos) << what;
      EXPECT_NE(what.find("--allow-fake"), std::string::npos) << what;
      EXPECT_EQ(what.find(real), std::string::npos) << "the real run is not blamed: " << what;
    }
  }

  Report r = build_report(store, {real, faked}, {1, 2}, FakeVerdicts::allow);
  EXPECT_EQ(r.provenance.verdicts, 4);
  EXPECT_EQ(r.provenance.fake_verdicts, 2);
  EXPECT_EQ(find_group(r, faked, gemm).provenance.fake_verdicts, 2);
  EXPECT_EQ(find_group(r, faked, attn).provenance.fake_verdicts, 0);
  EXPECT_EQ(find_group(r, real, gemm).provenance.fake_verdicts, 0);

  // Every table's title line carries the tag: the default's Runs, Table 1 and Table 9; --full's
  // Runs, Provenance, the budget tables, pass@k, languages, labels, transitions, tokens, reasoning
  // and token ratios.
  for (auto [detail, titles] : {std::pair{TextDetail::paper, std::size_t{3}}, std::pair{TextDetail::full, budget_tables().size() + 9}}) {
    std::string text = render_text(r, detail);
    EXPECT_NE(text.find("FAKE BACKEND: 2 of 4 verdicts"), std::string::npos) << text;
    std::size_t tagged = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.find(kFakeTag) == std::string::npos) continue;
      ++tagged;
      EXPECT_NE(line[0], ' ') << "a title line: " << line;
    }
    EXPECT_EQ(tagged, titles) << text;
    for (const char* heading : {"Table 1.", "Table 9.", "Runs"}) {
      auto at = text.find(std::string("\n") + heading);
      ASSERT_NE(at, std::string::npos) << heading;
      EXPECT_NE(text.substr(at, text.find('\n', at + 1) - at).find(kFakeTag), std::string::npos) << heading;
    }
  }
  EXPECT_NE(unwrap(render_text(r, TextDetail::full)).find("fake backend (2 of 2 verdicts)"), std::string::npos)
      << "the provenance of the fake gemm group";

  std::string csv = report_csv(r);
  std::size_t marked = 0;
  for (const auto& row : csv_rows(csv, gemm)) {
    // The fake run's rows, and the token ratios that compare with it.
    bool fake_group = row.rfind(faked + ",", 0) == 0 || row.find(",token_ratio_") != std::string::npos;
    EXPECT_EQ(provenance_of(row), fake_group ? ",fake_backend" : ",") << row;
    marked += fake_group;
  }
  EXPECT_GT(marked, 10u) << "every row of the fake gemm group";
  EXPECT_NE(csv.find(faked + ",model-f," + gemm + ",,,-,cuda,1,fake_backend_verdicts,,,,,,,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(real + ",model-r," + gemm + ",,,NVIDIA H200,cuda,1,turn_correctness_rate,1,,,,,,1,"), std::string::npos);
  for (const auto& row : csv_rows(csv, attn)) EXPECT_EQ(provenance_of(row), ",") << "no fake verdict in this group: " << row;

  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["provenance"]["fake_backend_verdicts"], 2);
  EXPECT_NE(j["fake_backend"].get<std::string>().find("fake backend"), std::string::npos);
  EXPECT_EQ(j["trajectories"][1]["turns"][1]["fake_backend"], true);
  EXPECT_EQ(j["trajectories"][0]["turns"][0]["fake_backend"], false);

  std::string html = render_html(r);
  EXPECT_NE(html.find("class=\"bad fake-banner\""), std::string::npos);
  // Curves, Table 1, Table 9, other metrics, languages, runs, provenance, labels, tokens,
  // trajectories: each heading says so.
  EXPECT_EQ(count(html, "<span class=\"bad fake-tag\">"), 10u);
}

TEST(ReportFromStore, RunsOfTheNotesAblationReadApart) {
  EXPECT_EQ(run_condition(ordered_json{{"policy", "model"}}), "-");
  EXPECT_EQ(run_condition(ordered_json{{"repair_notes", {{"mode", "off"}}}}), "-");
  EXPECT_EQ(run_condition(ordered_json{{"repair_notes", {{"mode", "notes"}, {"store", "n.db"}, {"k", 3}}}}), "notes (k 3)");
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  const std::string gemm = "gemm_n7168_k5120";
  std::string plain = store.create_run({{"policy", "model"}, {"num_turns", 1}}, "model-n", "no notes");
  std::string noted = store.create_run({{"policy", "model"},
                                        {"num_turns", 1},
                                        {"repair_from", {{"file", "seeds.jsonl"}, {"sha256", "ab"}}},
                                        {"repair_notes", {{"mode", "notes+kernel"}, {"store", "n.db"}, {"k", 2}}}},
                                       "model-n", "notes and kernel");
  for (const auto& run : {plain, noted}) add_trajectory(store, run, {gemm, "", "contract", 0}, {{"PASSED", 1.1, true}}, finished());
  Report r = build_report(store, {plain, noted}, {1});
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].condition, "-");
  EXPECT_EQ(r.runs[1].condition, "repair seeds; notes+kernel (k 2)");
  EXPECT_NE(render_text(r).find("repair seeds; notes+kernel (k 2)"), std::string::npos);
  EXPECT_NE(render_html(r).find("<td>repair seeds; notes+kernel (k 2)</td>"), std::string::npos);
  EXPECT_EQ(ordered_json::parse(report_json(r).dump())["runs"][1]["condition"], "repair seeds; notes+kernel (k 2)");
}

TEST(ReportFromStore, EvaluationOptionsOffTheirDefaultsAreFlagged) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  std::string run = store.create_run({{"policy", "model"}, {"num_turns", 2}}, "model-o", "options");
  const std::string gemm = "gemm_n7168_k5120", attn = "mha_with_lse_d128";
  const int defaults = EvalOptions{}.correctness_trials;
  ScriptedTurn more_trials{"PASSED", 1.2, true}, no_sanitize{"INCORRECT_NUMERICAL"};
  more_trials.options = [&](EvalOptions& o) {
    o.correctness_trials = o.timing.trials = defaults + 2;
    o.timing.fresh_inputs = false;  // the diagnostic of `eval --no-fresh-inputs`
  };
  no_sanitize.options = [](EvalOptions& o) { o.sanitize = false; };
  add_trajectory(store, run, {gemm, "", "params", 0}, {no_sanitize, more_trials}, finished());
  add_trajectory(store, run, {attn, "", "params", 0}, {{"PASSED", 1.1, true}}, finished());
  // An older verdict without environment.options: the skipped sanitize stage still tells.
  ordered_json skipped = scripted_verdict({"RUNTIME_ERROR", {}, false, false, false, ""}, attn);
  skipped["stages"]["sanitize"] = {{"tool", "compute-sanitizer --tool memcheck"}, {"runs", ordered_json::array()}, {"skipped", "disabled by option"}};
  int64_t t = store.ensure_trajectory(run, {attn, "", "params", 1});
  store.record_initial_messages(t, {{"system", "rules", 0, 0}, {"user", "task", 0, 0}});
  store.begin_turn(t, 1);
  const std::string source = "extern \"C\" int ptxb_run() { return 1; }\n";
  store.record_model_answer(t, 1, "```cuda\n" + source + "```\n", ModelUsage{});
  store.record_candidate(t, 1, source);
  store.record_submission(t, 1, "task-old");
  store.record_verdict(t, 1, "task-old", skipped);
  store.complete_turn(t, 1, finished());

  Report r = build_report(store, {run}, {1, 2});
  const Group& g = find_group(r, run, gemm);
  ASSERT_TRUE(g.provenance.options_changed());
  EXPECT_EQ(g.provenance.verdicts, 2);
  auto find_change = [](const Provenance& p, const std::string& option) -> const OptionChange* {
    for (const auto& c : p.changed_options)
      if (c.option == option) return &c;
    return nullptr;
  };
  const OptionChange* trials = find_change(g.provenance, "correctness_trials");
  ASSERT_NE(trials, nullptr) << describe_changes(g.provenance);
  EXPECT_EQ(trials->value, std::to_string(defaults + 2));
  EXPECT_EQ(trials->default_value, std::to_string(defaults));
  EXPECT_EQ(trials->verdicts, 1);
  ASSERT_NE(find_change(g.provenance, "timing.trials"), nullptr);
  const OptionChange* fresh = find_change(g.provenance, "timing.fresh_inputs");
  ASSERT_NE(fresh, nullptr) << describe_changes(g.provenance);
  EXPECT_EQ(fresh->value, "false");
  EXPECT_EQ(fresh->default_value, "true");
  const OptionChange* sanitize = find_change(g.provenance, "sanitize");
  ASSERT_NE(sanitize, nullptr);
  EXPECT_EQ(sanitize->value, "false");
  EXPECT_EQ(find_change(g.provenance, "tolerance.atol"), nullptr) << "a default is not a change";
  EXPECT_EQ(find_change(g.provenance, "timing.warmup_calls"), nullptr);

  const Group& a = find_group(r, run, attn);
  ASSERT_EQ(a.provenance.changed_options.size(), 1u) << describe_changes(a.provenance);
  EXPECT_EQ(a.provenance.changed_options[0].option, "sanitize");
  EXPECT_EQ(a.provenance.changed_options[0].value, "skipped (disabled by option)");
  EXPECT_EQ(a.provenance.verdicts, 2);
  // A verdict with every option at its default adds nothing.
  EXPECT_TRUE(changed_options(Verdict::from_json(scripted_verdict({"PASSED", 1.0, true}, gemm))).empty());

  std::string text = render_text(r, TextDetail::full);
  EXPECT_NE(unwrap(text).find("correctness_trials = " + std::to_string(defaults + 2) + " (default " + std::to_string(defaults) +
                      ") in 1 of 2 verdicts"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("FAKE BACKEND"), std::string::npos);
  EXPECT_NE(unwrap(render_text(r)).find("evaluation options off their defaults: see --full"), std::string::npos);
  std::string csv = report_csv(r);
  for (const auto& row : csv_rows(csv, gemm)) EXPECT_EQ(provenance_of(row), ",options_changed") << row;
  EXPECT_NE(csv.find("evaluation_option_changed,,,,sanitize = false,default true,,1,"), std::string::npos) << csv;
  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["groups"][0]["provenance"]["changed_options"].size(), 4u);  // trials ×2, fresh inputs, sanitize
  EXPECT_NE(render_html(r).find("id=\"provenance-table\""), std::string::npos);

  // Nothing changed anywhere: the report says so in one line.
  std::string plain = store.create_run({{"policy", "model"}, {"num_turns", 1}}, "model-p", "plain");
  add_trajectory(store, plain, {gemm, "", "params", 0}, {{"PASSED", 1.5, true}}, finished());
  EXPECT_NE(unwrap(render_text(build_report(store, {plain}, {1}), TextDetail::full)).find("with the evaluator's default options"),
            std::string::npos);
}

namespace {

// An OpenAI-compatible endpoint scripted per trajectory (the run has concurrency 1, so
// trajectories come one after another) and turn: what a model would answer.
class ScriptedProvider {
 public:
  ScriptedProvider() : m_server(HttpServerOptions{}, [this](const HttpRequest& r) { return handle(r); }) { m_server.start(); }
  [[nodiscard]] std::string url() const { return "http://" + m_server.address() + "/v1"; }

 private:
  static std::string kernel(const std::string& marker) {
    return "```cuda\n#include \"ptxbench_abi.h\"\n// " + marker +
           " PTXB_FAKE_SECONDS=0.01\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n```\n";
  }
  HttpResponse handle(const HttpRequest& r) {
    ordered_json body = ordered_json::parse(r.body);
    int turn = 1;
    for (const auto& m : body["messages"]) turn += m["role"] == "assistant";
    int trajectory;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (turn == 1) ++m_started;
      trajectory = m_started - 1;
    }
    // #0: COMPILE_ERROR, then 1.5x (stops early at the 1.2 target). #1: no code, numerical, 0.8x, 1.1x.
    static const std::vector<std::vector<std::string>> script = {
        {kernel("PTXB_FAKE_STATUS=COMPILE_ERROR"), kernel("PTXB_FAKE_SPEEDUP=1.5")},
        {"Let me think first.", kernel("PTXB_FAKE_STATUS=INCORRECT_NUMERICAL"), kernel("PTXB_FAKE_SPEEDUP=0.8"), kernel("PTXB_FAKE_SPEEDUP=1.1")}};
    const auto& mine = script.at(static_cast<std::size_t>(trajectory) % script.size());
    std::string text = mine.at(std::min<std::size_t>(static_cast<std::size_t>(turn - 1), mine.size() - 1));
    ordered_json out = {{"id", "scripted"},
                        {"object", "chat.completion"},
                        {"model", "scripted-model"},
                        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
                        {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 100}, {"total_tokens", 1100}}}};
    return HttpResponse::json(200, out.dump());
  }
  std::mutex m_mutex;
  int m_started = 0;
  HttpServer m_server;
};

}  // namespace

TEST(ReportFromRun, RealAgentRunReportedThroughTheCommandLine) {
  TempDir dir;
  ScriptedProvider provider;
  ordered_json cfg = {{"policy", "model"},
                      {"model", {{"provider", "openai"}, {"base_url", provider.url()}, {"model", "scripted-model"}, {"api_key_env", ""}, {"max_tokens", 4096}}},
                      {"definitions", {"gemm_n7168_k5120"}},
                      {"prompt_tags", {"params"}},
                      {"trajectories_per_tag", 2},
                      {"num_turns", 4},
                      {"target_speedup", 1.2},
                      {"concurrency", 1},
                      {"service", "local"}};
  AgentRunSetup setup;
  setup.root = PTXBENCH_SOURCE_DIR;
  setup.store = (dir.path() / "runs.db").string();
  setup.runs_dir = dir.path() / "runs";
  setup.ptxbench = executable_dir() / "ptxbench";
  setup.local_service_args = {"--fake-gpus", "2"};
  AgentRunResult run = start_run(run_config_from_json(cfg), setup);
  ASSERT_TRUE(run.complete());

  fs::path csv = dir.path() / "out" / "report.csv", json = dir.path() / "out" / "report.json", html = dir.path() / "out" / "report.html";
  ProcessSpec spec;
  spec.argv = {setup.ptxbench.string(), "report", run.run_id, "--store", setup.store, "--csv", csv.string(), "--json", json.string(),
               "--html", html.string(), "--budgets", "1,4,8"};
  // The fake service's verdicts are refused as an input error, then reported with --allow-fake.
  ProcessResult refused = run_process(spec, 120);
  EXPECT_EQ(refused.status.exit_code, 2) << refused.out.text << refused.err.text;
  EXPECT_NE(refused.err.text.find("--allow-fake"), std::string::npos) << refused.err.text;
  EXPECT_FALSE(fs::exists(json)) << "no output written for a refused report";
  spec.argv.push_back("--allow-fake");
  ProcessResult p = run_process(spec, 120);
  ASSERT_TRUE(p.status.success()) << p.out.text << p.err.text;
  EXPECT_NE(p.out.text.find(std::string("Table 1. Turn correctness rate (%) at T = 1 / 4 / 8; missing turns count as not correct "
                                        "(the paper's rule: denominator = trajectories x T) ") + kFakeTag),
            std::string::npos)
      << p.out.text;
  // #0: X C (stopped early: 2 missing turns, not correct), #1: E N C(0.8) C(1.1); the fake service
  // affirms the target instructions on every timed PASSED verdict. T = 4: 3 of 8 slots.
  EXPECT_TRUE(std::regex_search(p.out.text, std::regex(R"(target-instr\. +0\.0 \[0\.0, 0\.0\] +37\.5 \[[0-9.]+, [0-9.]+\] +n/a)")))
      << p.out.text;
  EXPECT_TRUE(std::regex_search(p.out.text, std::regex(R"(target-instr\. +- +1\.500 \[1\.100, 1\.500\] +n/a)"))) << p.out.text;
  // Its PASSED verdicts hold no strict verdict: --full shows the strict values as unknown.
  EXPECT_NE(read_file(csv).find("strict_correctness_rate,4,,,,,,,"), std::string::npos) << "unknown: no value";
  ordered_json j = ordered_json::parse(read_file(json));
  ASSERT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["groups"][0]["model"], "scripted-model");
  EXPECT_EQ(j["groups"][0]["budgets"][1]["missing_slots"], 2);
  EXPECT_EQ(j["groups"][0]["budgets"][1]["carried_slots"], 0);
  EXPECT_DOUBLE_EQ(j["groups"][0]["budgets"][1]["turn_correctness_rate"].get<double>(), 0.375);
  EXPECT_TRUE(j["groups"][0]["budgets"][1]["strict_correctness_rate"].is_null());
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "report.metrics.csv")) << "the CSV's side file";
  EXPECT_EQ(j["groups"][0]["turn_labels"]["total"]["Extraction error"], 1);
  EXPECT_EQ(j["groups"][0]["tokens"]["total"]["prompt"], 6 * 1000);
  EXPECT_EQ(j["groups"][0]["provenance"]["fake_backend_verdicts"], 5) << "X C, N C C";
  EXPECT_EQ(j["groups"][0]["strict_unknown_turns"], 3);
  EXPECT_NE(read_file(csv).find("fast_p,4,1,,,,,1,"), std::string::npos) << "both trajectories beat 1.0 within 4 turns";
  EXPECT_NE(read_file(csv).find("fast_inst_strict_p,4,1,,,,,,"), std::string::npos) << "no strict verdict: unknown";
  std::string page = read_file(html);
  EXPECT_NE(page.find("PTXB_FAKE_SPEEDUP=1.1"), std::string::npos) << "the drill-down holds the candidates";
  EXPECT_NE(page.find("Let me think first."), std::string::npos) << "and the answer without code";
  EXPECT_NE(page.find("class=\"bad fake-banner\""), std::string::npos);

  ProcessSpec bad = spec;
  bad.argv = {setup.ptxbench.string(), "report", "no-such-run", "--store", setup.store};
  ProcessResult b = run_process(bad, 60);
  EXPECT_EQ(b.status.exit_code, 2);
  EXPECT_NE(b.err.text.find(run.run_id), std::string::npos) << "the error lists the stored runs: " << b.err.text;
}

// `--by tag`: the prompt-knowledge ablation (Table 4) from one run: a row per definition x tag and
// an '(all)' row per tag pooling the definitions, hand-counted.
TEST(ReportFromStore, ByTagSplitsEachDefinitionByPromptTagAndPoolsEachTag) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  std::string run = store.create_run({{"policy", "model"}, {"num_turns", 2}}, "model-t", "ablation");
  const std::string gemm = "gemm_n7168_k5120", attn = "mha_with_lse_d128";
  add_trajectory(store, run, {gemm, "", "params", 0}, {{"COMPILE_ERROR"}, {"PASSED", 0.5, true}}, finished());
  add_trajectory(store, run, {gemm, "", "contract", 0}, {{"PASSED", 0.9, true}, {"PASSED", 1.2, true}}, finished());
  add_trajectory(store, run, {attn, "", "params", 0}, {{"COMPILE_ERROR"}, {"COMPILE_ERROR"}}, finished());
  add_trajectory(store, run, {attn, "", "contract", 0}, {{"PASSED", 0.7, true}, {"INCORRECT_NUMERICAL"}}, finished());

  Report by_def = build_report(store, {run}, {2});
  EXPECT_EQ(by_def.groups.size(), 3u) << "gemm, attn, (all)";
  Report r = build_report(store, {run}, {2}, FakeVerdicts::refuse, GroupBy::tag);
  ASSERT_EQ(r.groups.size(), 6u) << "gemm x 2 tags, attn x 2 tags, (all) x 2 tags";
  auto find = [&](const std::string& def, const std::string& tag) -> const Group& {
    for (const auto& g : r.groups)
      if (g.definition == def && g.tag == tag) return g;
    ADD_FAILURE() << def << " " << tag;
    return r.groups.front();
  };
  EXPECT_DOUBLE_EQ(*find(gemm, "params").metrics.budgets[0].correctness_rate, 0.5);
  EXPECT_DOUBLE_EQ(*find(gemm, "contract").metrics.budgets[0].max_best, 1.2);
  const Group& params = find(kPooledDefinition, "params");
  EXPECT_TRUE(params.pooled);
  EXPECT_EQ(params.members.size(), 2u);
  EXPECT_DOUBLE_EQ(*params.metrics.budgets[0].correctness_rate, 1.0 / 4.0);
  const Group& contract = find(kPooledDefinition, "contract");
  EXPECT_DOUBLE_EQ(*contract.metrics.budgets[0].correctness_rate, 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(*contract.metrics.budgets[0].median_best, (1.2 + 0.7) / 2);

  std::string text = render_text(r, TextDetail::full);
  EXPECT_NE(text.find("Tag"), std::string::npos);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(model-t +\(all\) +contract +NVIDIA H200 +2 )"))) << text;
  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["group_by"], "tag");
  EXPECT_EQ(j["groups"][0]["tag"], "params");
  EXPECT_NE(report_csv(r).find(run + ",model-t,(all),,contract,NVIDIA H200,cuda,2,turn_correctness_rate,2,,,,,,0.75,"), std::string::npos)
      << report_csv(r);
  EXPECT_NE(render_html(r).find("<th>Tag</th>"), std::string::npos);
}

// --model / --definition / --tag keep some trajectories; a value that names nothing is refused,
// naming what exists.
TEST(ReportFromStore, FiltersKeepTheTrajectoriesTheyName) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  SampleRuns runs = build_sample_runs(store);
  ReportOptions o;
  o.filters.definitions = {"gemm_n7168_k5120"};
  Report r = build_report(store, {runs.agent, runs.refinement}, o);
  ASSERT_EQ(r.groups.size(), 2u) << "gemm of each run; one definition left: no (all) row";
  for (const auto& g : r.groups) EXPECT_EQ(g.definition, "gemm_n7168_k5120");
  EXPECT_EQ(r.trajectories.size(), 5u) << "attn's trajectory is gone from the drill-down too";
  EXPECT_NE(render_text(r).find("Filtered: --definition gemm_n7168_k5120"), std::string::npos);
  EXPECT_EQ(ordered_json::parse(report_json(r).dump())["filters"]["definitions"][0], "gemm_n7168_k5120");

  o.filters = {};
  o.filters.models = {"model-a"};
  Report m = build_report(store, {runs.agent, runs.refinement}, o);
  for (const auto& g : m.groups) EXPECT_EQ(g.run_id, runs.agent);
  EXPECT_EQ(m.runs[1].trajectories.size(), 0u) << "the other run is listed, with none kept";

  o.filters = {};
  o.filters.tags = {"params"};
  EXPECT_EQ(build_report(store, {runs.agent}, o).trajectories.size(), 4u);

  for (auto [field, value] : {std::pair{0, "no-such-model"}, std::pair{1, "gemm"}, std::pair{2, "contract"}}) {
    ReportOptions bad;
    (field == 0 ? bad.filters.models : field == 1 ? bad.filters.definitions : bad.filters.tags) = {value};
    try {
      build_report(store, {runs.agent}, bad);
      ADD_FAILURE() << "a filter that matches nothing: " << value;
    } catch (const InputError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(std::string("'") + value + "' matches no trajectory"), std::string::npos) << what;
      EXPECT_NE(what.find(field == 0 ? "model-a" : field == 1 ? "gemm_n7168_k5120" : "params"), std::string::npos) << what;
    }
  }
  ReportOptions bad_k;
  bad_k.pass_k = {0};
  EXPECT_THROW(build_report(store, {runs.agent}, bad_k), InputError);
}

// "-" is stdout for every output; output paths are checked before the work starts.
TEST(ReportFromRun, OutputsToStdoutAndPathsCheckedFirst) {
  TempDir dir;
  const std::string db = (dir.path() / "runs.db").string();
  SampleRuns runs;
  {
    RunStore store(db);
    runs = build_sample_runs(store);
  }
  const std::string exe = (executable_dir() / "ptxbench").string();
  auto run = [&](std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {exe, "report", runs.agent, "--store", db, "--bootstrap", "100"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    return run_process(spec, 120);
  };
  ProcessResult json = run({"--json", "-"});
  ASSERT_TRUE(json.status.success()) << json.err.text;
  ordered_json j = ordered_json::parse(json.out.text);  // nothing but the JSON on stdout
  EXPECT_EQ(j["schema"], kReportSchema);
  EXPECT_EQ(j["bootstrap"]["resamples"], 100);
  ProcessResult csv = run({"--csv", "-", "--carry-forward", "--definition", "gemm_n7168_k5120"});
  ASSERT_TRUE(csv.status.success()) << csv.err.text;
  EXPECT_EQ(csv.out.text.rfind("run,model,definition,experiment,", 0), 0u) << csv.out.text.substr(0, 200);
  EXPECT_NE(csv.out.text.find(",carry_forward,"), std::string::npos);
  EXPECT_EQ(csv.out.text.find("attn_"), std::string::npos) << "filtered";
  ProcessResult html = run({"--html", "-"});
  ASSERT_TRUE(html.status.success()) << html.err.text;
  EXPECT_EQ(html.out.text.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_FALSE(fs::exists("-"));

  // Refused before any work (exit 2): two outputs on stdout; a folder that is a file; the same file
  // twice. The run id is wrong too: the output is what the error names, so it was checked first.
  write_file_atomic(dir.path() / "plain.txt", "x");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
      {{"--json", "-", "--csv", "-"}, "only one of --csv, --json and --html can be -"},
      {{"--json", (dir.path() / "plain.txt" / "r.json").string()}, "--json"},
      {{"--json", (dir.path() / "same").string(), "--html", (dir.path() / "same").string()}, "same file"},
      {{"--html", dir.path().string()}, "is a folder"},
  };
  for (const auto& [args, why] : refusals) {
    ProcessSpec spec;
    spec.argv = {exe, "report", "no-such-run", "--store", db};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    ProcessResult b = run_process(spec, 60);
    EXPECT_EQ(b.status.exit_code, 2) << why << "\n" << b.err.text;
    EXPECT_NE(b.err.text.find(why), std::string::npos) << b.err.text;
    EXPECT_EQ(b.err.text.find("no run 'no-such-run'"), std::string::npos) << "checked after the outputs: " << b.err.text;
  }
  // --csv FILE writes the side file beside it.
  ProcessResult files = run({"--csv", (dir.path() / "o" / "m.csv").string()});
  ASSERT_TRUE(files.status.success()) << files.err.text;
  EXPECT_NE(read_file(dir.path() / "o" / "m.metrics.csv").find("\nturn_correctness_rate,turn_correctness_rate,"), std::string::npos);
}

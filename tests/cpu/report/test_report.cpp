// `ptxbench report` over run stores: one written through the RunStore API with hand-counted
// numbers (groups, carry-forward, INFRA_ERROR, missing SASS data, token ratios, every output
// format, escaping of model text), the strict target-instruction rule beside the paper's, the
// provenance marks (fake-backend verdicts refused unless allowed, then marked everywhere;
// evaluation options off their defaults), and one made by a real agent run (fake model provider,
// local service with fake GPUs) reported through the command line.
#include <gtest/gtest.h>

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

// A CSV row's provenance column with its leading comma (",fake_backend", ","): the field before the
// last one (language).
std::string provenance_of(const std::string& row) {
  auto last = row.rfind(',');
  auto before = row.rfind(',', last - 1);
  return row.substr(before, last - before);
}

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
  // T=4: #0 X C C* C* (3, target 3); #1 E N C C (2, target 1: turn 3 has no SASS data); #2 I S K R (0 of 3).
  EXPECT_EQ(t4.slots, 11);
  EXPECT_EQ(t4.infra_slots, 1);
  EXPECT_EQ(t4.carried_slots, 2);
  EXPECT_DOUBLE_EQ(*t4.correctness_rate, 5.0 / 11.0);
  EXPECT_DOUBLE_EQ(*t4.target_rate, 4.0 / 11.0);
  EXPECT_DOUBLE_EQ(*t4.max_best, 1.5);
  EXPECT_DOUBLE_EQ(*t4.median_best, 1.3);
  EXPECT_DOUBLE_EQ(*t4.median_best_target, 1.3);
  EXPECT_FALSE(t8.measured) << "num_turns 4";
  EXPECT_EQ(budget_cell(gemm.metrics, budget_tables()[0]), "0.0 / 36.4 / n/a (0.0 / 45.5 / n/a)");
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
  EXPECT_EQ(budget_cell(pooled.metrics, budget_tables()[0]), "33.3 / 53.3 / n/a (33.3 / 60.0 / n/a)");

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

  std::string text = render_text(r);
  EXPECT_NE(text.find("Table 1. Turn correctness rate (%), T = 1 / 4 / 8: target-instruction (unrestricted)"), std::string::npos) << text;
  EXPECT_NE(text.find("0.0 / 36.4 / n/a (0.0 / 45.5 / n/a)"), std::string::npos) << text;
  EXPECT_NE(text.find("Early stop: carry-forward"), std::string::npos);
  EXPECT_NE(text.find("Sanitize timeout"), std::string::npos);
  EXPECT_NE(text.find("Token ratio"), std::string::npos);
  EXPECT_NE(text.find("2.667"), std::string::npos) << "gemm total-token ratio of medians 4800/1800";
  EXPECT_NE(text.find("Reasoning tokens by turn"), std::string::npos);

  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["schema"], kReportSchema);
  EXPECT_EQ(j["definitions"].size(), metric_definitions().size());
  EXPECT_TRUE(j["definitions"].contains("carry_forward"));
  EXPECT_EQ(j["groups"].size(), 4u);
  const auto& g0 = j["groups"][0];
  EXPECT_EQ(g0["definition"], "gemm_n7168_k5120");
  EXPECT_NEAR(g0["budgets"][1]["turn_correctness_rate"].get<double>(), 5.0 / 11.0, 1e-12);
  EXPECT_EQ(g0["budgets"][2]["measured"], false);
  EXPECT_EQ(g0["budgets"][1]["per_trajectory"].size(), 3u);
  EXPECT_EQ(g0["turn_labels"]["total"]["Infra error (excluded)"], 1);
  EXPECT_EQ(j["trajectories"].size(), 6u);
  EXPECT_EQ(j["comparisons"].size(), 2u);

  std::string csv = report_csv(r);
  EXPECT_EQ(csv.rfind("run,model,definition,tag,gpu,trajectories,metric,budget,p,label,to_label,other_run,value,metric_definition,provenance,language\n", 0),
            0u);
  EXPECT_NE(csv.find(runs.agent + ",model-a,gemm_n7168_k5120,,NVIDIA H200,3,turn_correctness_rate,4,,,,,0.454545,"), std::string::npos);
  const std::string gemm_key = runs.agent + ",model-a,gemm_n7168_k5120,,NVIDIA H200,3,";
  EXPECT_NE(csv.find(gemm_key + "tokens_total_median_per_trajectory,,,,,,4800,"), std::string::npos);
  EXPECT_NE(csv.find(gemm_key + "reasoning_tokens_by_turn_calls,,,turn 3,,,2,"), std::string::npos);
  EXPECT_NE(csv.find(gemm_key + "fast_p,4,1.2,,,,0.333333,"), std::string::npos) << "bests 1.5, 1.1, none";
  EXPECT_NE(csv.find(gemm_key + "fast_p,4,1.5,,,,0,"), std::string::npos) << "strict: 1.5 is not > 1.5";
  EXPECT_NE(csv.find("transition_count,,,Infra error (excluded),Sanitize timeout,,1,"), std::string::npos);
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
  EXPECT_NE(html.find("Early stop: carry-forward"), std::string::npos);
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

  std::string text = render_text(r);
  EXPECT_NE(text.find("100.0 (100.0)"), std::string::npos) << "the paper's cell as before: " << text;
  EXPECT_NE(text.find("Strict rule (coverage)"), std::string::npos);
  EXPECT_NE(text.find("33.3*"), std::string::npos) << text;
  EXPECT_NE(unwrap(text).find("strict rule unknown for 1 of 3 correct turns"), std::string::npos) << text;

  std::string csv = report_csv(r);
  const std::string key = run + ",model-s," + gemm + ",,NVIDIA H200,3,";
  EXPECT_NE(csv.find(key + "fast_inst_p,1,1,,,,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(key + "fast_inst_strict_p,1,1,,,,0.333333,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(key + "strict_correctness_rate,1,,,,,0.333333,"), std::string::npos);
  EXPECT_NE(csv.find(key + "strict_unknown_turns,,,,,,1,"), std::string::npos);

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
  EXPECT_NE(html.find("strict: 33.3*"), std::string::npos);
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

  std::string text = render_text(r);
  EXPECT_NE(text.find("FAKE BACKEND: 2 of 4 verdicts"), std::string::npos) << text;
  // Every table's title line carries the tag.
  std::size_t titles = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("Table ", 0) == 0 || line.rfind("Runs", 0) == 0 || line.rfind("Turn labels", 0) == 0 ||
        line.rfind("Tokens per trajectory", 0) == 0 || line.rfind("Token ratio", 0) == 0 || line.rfind("Error-state", 0) == 0 ||
        line.rfind("Fast_p by language", 0) == 0) {
      ++titles;
      EXPECT_NE(line.find(kFakeTag), std::string::npos) << line;
    }
  EXPECT_EQ(titles, budget_tables().size() + 6) << text;
  EXPECT_NE(unwrap(text).find("fake backend (2 of 2 verdicts)"), std::string::npos) << "the provenance of the fake gemm group";

  std::string csv = report_csv(r);
  std::size_t marked = 0;
  for (const auto& row : csv_rows(csv, gemm)) {
    // The fake run's rows, and the token ratios that compare with it.
    bool fake_group = row.rfind(faked + ",", 0) == 0 || row.find(",token_ratio_") != std::string::npos;
    EXPECT_EQ(provenance_of(row), fake_group ? ",fake_backend" : ",") << row;
    marked += fake_group;
  }
  EXPECT_GT(marked, 10u) << "every row of the fake gemm group";
  EXPECT_NE(csv.find(faked + ",model-f," + gemm + ",,-,1,fake_backend_verdicts,,,,,,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(real + ",model-r," + gemm + ",,NVIDIA H200,1,turn_correctness_rate,1,,,,,1,"), std::string::npos);
  for (const auto& row : csv_rows(csv, attn)) EXPECT_EQ(provenance_of(row), ",") << "no fake verdict in this group: " << row;

  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["provenance"]["fake_backend_verdicts"], 2);
  EXPECT_NE(j["fake_backend"].get<std::string>().find("fake backend"), std::string::npos);
  EXPECT_EQ(j["trajectories"][1]["turns"][1]["fake_backend"], true);
  EXPECT_EQ(j["trajectories"][0]["turns"][0]["fake_backend"], false);

  std::string html = render_html(r);
  EXPECT_NE(html.find("class=\"bad fake-banner\""), std::string::npos);
  // Runs, provenance, metrics, languages, curves, labels, tokens, trajectories: each heading says so.
  EXPECT_EQ(count(html, "<span class=\"bad fake-tag\">"), 8u);
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

  std::string text = render_text(r);
  EXPECT_NE(unwrap(text).find("correctness_trials = " + std::to_string(defaults + 2) + " (default " + std::to_string(defaults) +
                      ") in 1 of 2 verdicts"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("FAKE BACKEND"), std::string::npos);
  std::string csv = report_csv(r);
  for (const auto& row : csv_rows(csv, gemm)) EXPECT_EQ(provenance_of(row), ",options_changed") << row;
  EXPECT_NE(csv.find("evaluation_option_changed,,,sanitize = false,default true,,1,"), std::string::npos) << csv;
  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["groups"][0]["provenance"]["changed_options"].size(), 4u);  // trials ×2, fresh inputs, sanitize
  EXPECT_NE(render_html(r).find("id=\"provenance-table\""), std::string::npos);

  // Nothing changed anywhere: the report says so in one line.
  std::string plain = store.create_run({{"policy", "model"}, {"num_turns", 1}}, "model-p", "plain");
  add_trajectory(store, plain, {gemm, "", "params", 0}, {{"PASSED", 1.5, true}}, finished());
  EXPECT_NE(unwrap(render_text(build_report(store, {plain}, {1}))).find("with the evaluator's default options"), std::string::npos);
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
  EXPECT_NE(p.out.text.find(std::string("Table 1. Turn correctness rate (%), T = 1 / 4 / 8: target-instruction (unrestricted) ") + kFakeTag),
            std::string::npos)
      << p.out.text;
  // Its PASSED verdicts hold no strict verdict: the strict values are lower bounds.
  EXPECT_TRUE(std::regex_search(p.out.text, std::regex(R"(0\.0 / 62\.5 / n/a \(0\.0 / 62\.5 / n/a\) +0\.0 / 0\.0\* / n/a)")))
      << p.out.text;
  // #0: X C (stopped early, carried), #1: E N C(0.8) C(1.1); the fake service affirms the target
  // instructions on every timed PASSED verdict.
  EXPECT_NE(p.out.text.find("0.0 / 62.5 / n/a (0.0 / 62.5 / n/a)"), std::string::npos) << p.out.text;
  EXPECT_NE(p.out.text.find("- / 1.500 / n/a (- / 1.500 / n/a)"), std::string::npos) << p.out.text;
  EXPECT_NE(p.out.text.find("- / 1.300 [n=2] / n/a (- / 1.300 [n=2] / n/a)"), std::string::npos) << "median of 1.5 and 1.1";
  ordered_json j = ordered_json::parse(read_file(json));
  ASSERT_EQ(j["groups"].size(), 1u);
  EXPECT_EQ(j["groups"][0]["model"], "scripted-model");
  EXPECT_EQ(j["groups"][0]["budgets"][1]["carried_slots"], 2);
  EXPECT_DOUBLE_EQ(j["groups"][0]["budgets"][1]["turn_correctness_rate"].get<double>(), 0.625);
  EXPECT_EQ(j["groups"][0]["turn_labels"]["total"]["Extraction error"], 1);
  EXPECT_EQ(j["groups"][0]["tokens"]["total"]["prompt"], 6 * 1000);
  EXPECT_EQ(j["groups"][0]["provenance"]["fake_backend_verdicts"], 5) << "X C, N C C";
  EXPECT_EQ(j["groups"][0]["strict_unknown_turns"], 3);
  EXPECT_NE(read_file(csv).find("fast_p,4,1,,,,1,"), std::string::npos) << "both trajectories beat 1.0 within 4 turns";
  EXPECT_NE(read_file(csv).find("fast_inst_strict_p,4,1,,,,0,"), std::string::npos) << "no strict verdict: none counted";
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

  std::string text = render_text(r);
  EXPECT_NE(text.find("Tag"), std::string::npos);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(model-t +\(all\) +contract +NVIDIA H200 +2 )"))) << text;
  ordered_json j = ordered_json::parse(report_json(r).dump());
  EXPECT_EQ(j["group_by"], "tag");
  EXPECT_EQ(j["groups"][0]["tag"], "params");
  EXPECT_NE(report_csv(r).find(run + ",model-t,(all),contract,NVIDIA H200,2,turn_correctness_rate,2,,,,,0.75,"), std::string::npos)
      << report_csv(r);
  EXPECT_NE(render_html(r).find("<th>Tag</th>"), std::string::npos);
}

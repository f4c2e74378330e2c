// The agent-vs-refinement comparison (report/agent_comparison.h) over two runs written through the
// RunStore API, with every table value and curve point counted by hand below: Table 3 medians
// (zeros for trajectories without a qualified turn), turns past N left out, INFRA_ERROR-only
// trajectories out of the medians but in the token medians, token ratios of medians, Figure 14
// step points and hand-enumerable bootstrap bands, the comparability checks (refusals and
// warnings), determinism by seed, every output (text, JSON, CSV, HTML with inline SVG), and
// `ptxbench report RUN --against RUN` through the command line.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/subprocess.h"
#include "report/agent_comparison.h"
#include "report/agent_comparison_html.h"
#include "test_report_support.h"

using namespace ptxbench;
using namespace ptxbench::report;
using namespace ptxbench::test;

namespace {

const std::string kGemm = "gemm_n7168_k5120", kMha = "mha_with_lse_d128", kBwd = "mha_bwd_d128";

// A scripted turn whose calls cost `tokens` in total: 100 completion, the rest prompt.
ScriptedTurn turn(const std::string& status, int64_t tokens, std::optional<double> speedup = std::nullopt, bool target = false) {
  ScriptedTurn t{status, speedup, target};
  t.prompt_tokens = tokens - 100;
  t.completion_tokens = 100;
  t.reasoning_tokens = 0;
  t.cached_tokens = 0;
  if (status == "EXTRACTION_ERROR" || status == "INFRA_ERROR") t.gpu = "";
  return t;
}

ScriptedTurn C(int64_t tokens, double speedup, bool target = true) { return turn("PASSED", tokens, speedup, target); }
ScriptedTurn X(int64_t tokens) { return turn("COMPILE_ERROR", tokens); }
ScriptedTurn N(int64_t tokens) { return turn("INCORRECT_NUMERICAL", tokens); }
ScriptedTurn E(int64_t tokens) { return turn("EXTRACTION_ERROR", tokens); }
ScriptedTurn I(int64_t tokens) { return turn("INFRA_ERROR", tokens); }

TrajectoryEnd ended() { return {TrajectoryStatus::finished, "agent ended the session"}; }

struct Runs {
  std::string agent, refinement;
};

// The agent (policy mcp-agent, budget 3) and refinement (num_turns 4) runs; tokens per turn in
// parentheses, cumulative tokens after the arrow.
//   agent gemm #0  X(1000) C1.2t(2000) C1.5t(3000)          -> 1000 3000 6000   best 1.5
//   agent gemm #1  C0.8(1000, not target) C2.0t(1000) N(1000) -> 1000 2000 3000  best 2.0
//   agent gemm #2  X(500) X(500) X(500)                      -> 500 1000 1500    best 0
//   agent mha  #0  C1.0t(10000)                              -> 10000            best 1.0
//   agent bwd  #0  C3.0t(1000)                               (the refinement ran no bwd: left out)
//   refinement gemm #0  C1.1t(4000) stopped early            -> 4000             best 1.1
//   refinement gemm #1  X(2000) C1.3t C1.4t C1.9t (2000 each) -> 2000 4000 6000 (turn 4 past N)  best 1.4
//   refinement gemm #2  E(1000) I(1000) N(1000) X(1000)      -> 1000 2000 3000   best 0
//   refinement gemm #3  I(1000)                              not counted (INFRA_ERROR only)
//   refinement mha  #0  C0.5t(1000) N N N (1000 each)        -> 1000 2000 3000   best 0.5
Runs build_runs(RunStore& store) {
  Runs r;
  r.agent = store.create_run({{"policy", kAgentPolicy}, {"num_turns", 3}, {"definitions", {kGemm, kMha, kBwd}}}, "codex",
                             "agent " + kInjection);
  add_trajectory(store, r.agent, {kGemm, "", "contract", 0}, {X(1000), C(2000, 1.2), C(3000, 1.5)}, ended());
  add_trajectory(store, r.agent, {kGemm, "", "contract", 1}, {C(1000, 0.8, false), C(1000, 2.0), N(1000)}, ended());
  add_trajectory(store, r.agent, {kGemm, "", "contract", 2}, {X(500), X(500), X(500)}, ended());
  add_trajectory(store, r.agent, {kMha, "", "contract", 0}, {C(10000, 1.0)}, ended());
  add_trajectory(store, r.agent, {kBwd, "", "contract", 0}, {C(1000, 3.0)}, ended());
  store.set_run_status(r.agent, RunStatus::finished);
  r.refinement = store.create_run({{"policy", "model"}, {"num_turns", 4}}, "gpt-model", "refinement");
  add_trajectory(store, r.refinement, {kGemm, "", "contract", 0}, {C(4000, 1.1)}, stopped_early());
  add_trajectory(store, r.refinement, {kGemm, "", "contract", 1}, {X(2000), C(2000, 1.3), C(2000, 1.4), C(2000, 1.9)}, finished());
  add_trajectory(store, r.refinement, {kGemm, "", "contract", 2}, {E(1000), I(1000), N(1000), X(1000)}, finished());
  add_trajectory(store, r.refinement, {kGemm, "", "contract", 3}, {I(1000)}, finished());
  add_trajectory(store, r.refinement, {kMha, "", "contract", 0}, {C(1000, 0.5), N(1000), N(1000), N(1000)}, finished());
  store.set_run_status(r.refinement, RunStatus::finished);
  return r;
}

const ComparisonRow& row_of(const AgentComparison& c, const std::string& definition) {
  for (const auto& r : c.rows)
    if (r.definition == definition) return r;
  throw std::runtime_error("no row " + definition);
}

const TokenCurve& curve_of(const AgentComparison& c, const std::string& definition) {
  for (const auto& r : c.curves)
    if (r.definition == definition) return r;
  throw std::runtime_error("no curve " + definition);
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(AgentComparison, Table3ValuesCountedByHand) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  Runs runs = build_runs(store);
  AgentComparison c = compare_agent_runs(store, runs.agent, runs.refinement);
  EXPECT_EQ(c.requests, 3) << "the agent run's budget";
  EXPECT_EQ(c.definitions, (std::vector<std::string>{kGemm, kMha}));
  ASSERT_EQ(c.rows.size(), 3u) << "gemm, mha, (all)";
  EXPECT_EQ(c.rows[2].definition, kPooledDefinition);

  const auto& gemm = row_of(c, kGemm);
  EXPECT_EQ(gemm.agent.counted, 3);
  EXPECT_EQ(gemm.refinement.trajectories, 4);
  EXPECT_EQ(gemm.refinement.counted, 3) << "#3 holds only INFRA_ERROR";
  const auto& a = gemm.agent.rule(InstructionRule::paper);
  EXPECT_EQ(a.bests, (std::vector<double>{1.5, 2.0, 0.0}));
  EXPECT_DOUBLE_EQ(*a.median, 1.5);
  EXPECT_EQ(a.with_qualified, 2);
  EXPECT_DOUBLE_EQ(*a.median_with_qualified, 1.75) << "Table 1's statistic: over the two that have one";
  EXPECT_DOUBLE_EQ(*a.max, 2.0);
  // The bootstrap of the median of {1.5, 2.0, 0}: as for {1, 2, 3}, each extreme is the median of
  // 7 of the 27 equally likely resamples (26%), far above the 2.5% tails: [0, 2.0].
  EXPECT_DOUBLE_EQ(a.band->lower, 0.0);
  EXPECT_DOUBLE_EQ(a.band->upper, 2.0);
  const auto& r = gemm.refinement.rule(InstructionRule::paper);
  EXPECT_EQ(r.bests, (std::vector<double>{1.1, 1.4, 0.0})) << "turn 4's 1.9 is past N = 3";
  EXPECT_DOUBLE_EQ(*r.median, 1.1);
  EXPECT_DOUBLE_EQ(r.band->lower, 0.0);
  EXPECT_DOUBLE_EQ(r.band->upper, 1.4);
  // Unrestricted: #1's 0.8 (not target) is below its 2.0 anyway. Strict: no verdict holds a
  // strict verdict, so every best is 0 and 4 correct turns are strict unknown.
  EXPECT_DOUBLE_EQ(*gemm.agent.rule(InstructionRule::unrestricted).median, 1.5);
  EXPECT_DOUBLE_EQ(*gemm.agent.rule(InstructionRule::strict).median, 0.0);
  EXPECT_EQ(gemm.agent.strict_unknown_turns, 4);

  // Cumulative tokens through N: agent 6000, 3000, 1500 -> 3000; refinement 4000, 6000 (not 8000),
  // 3000, 1000 (the INFRA_ERROR-only trajectory's call counts) -> 3500.
  EXPECT_DOUBLE_EQ(*gemm.agent.tokens.median_total, 3000.0);
  EXPECT_DOUBLE_EQ(*gemm.refinement.tokens.median_total, 3500.0);
  EXPECT_NEAR(*gemm.ratio.total, 3000.0 / 3500.0, 1e-12);
  // Completion (100 per turn): agent 300, 300, 300; refinement 100, 300, 300, 100 -> 200.
  EXPECT_NEAR(*gemm.ratio.completion, 1.5, 1e-12);

  const auto& mha = row_of(c, kMha);
  EXPECT_DOUBLE_EQ(*mha.agent.rule(InstructionRule::paper).median, 1.0);
  EXPECT_DOUBLE_EQ(*mha.refinement.rule(InstructionRule::paper).median, 0.5);
  EXPECT_DOUBLE_EQ(mha.agent.rule(InstructionRule::paper).band->lower, 1.0) << "one trajectory: a band of one value";
  EXPECT_NEAR(*mha.ratio.total, 10000.0 / 3000.0, 1e-12);

  // Pooled over gemm and mha (bwd left out): agent {1.5, 2.0, 0, 1.0} -> 1.25; refinement
  // {1.1, 1.4, 0, 0.5} -> 0.8; tokens agent {6000, 3000, 1500, 10000} -> 4500, refinement
  // {4000, 6000, 3000, 1000, 3000} -> 3000.
  const auto& all = row_of(c, kPooledDefinition);
  EXPECT_DOUBLE_EQ(*all.agent.rule(InstructionRule::paper).median, 1.25);
  EXPECT_DOUBLE_EQ(*all.refinement.rule(InstructionRule::paper).median, 0.8);
  EXPECT_NEAR(*all.ratio.total, 1.5, 1e-12);
  const auto& band = *all.agent.rule(InstructionRule::paper).band;
  EXPECT_LE(band.lower, 1.25);
  EXPECT_GE(band.upper, 1.25);
  EXPECT_GE(band.lower, 0.0);
  EXPECT_LE(band.upper, 2.0);
}

TEST(AgentComparison, Figure14CurvePointsCountedByHand) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  Runs runs = build_runs(store);
  AgentComparison c = compare_agent_runs(store, runs.agent, runs.refinement);
  const auto& g = curve_of(c, kGemm);
  // Every distinct cumulative token count of a judged turn of a counted trajectory within N.
  EXPECT_EQ(g.tokens, (std::vector<double>{500, 1000, 1500, 2000, 3000, 4000, 6000}));
  // Agent: #0 reaches 1.2 at 3000 and 1.5 at 6000, #1 2.0 at 2000 (its 0.8 at 1000 is not
  // target-instruction correct), #2 never: medians 0 0 0 0 1.2 1.2 1.5.
  EXPECT_EQ(g.agent.median, (std::vector<double>{0, 0, 0, 0, 1.2, 1.2, 1.5}));
  // Refinement: #0 1.1 at 4000, #1 1.3 at 4000 and 1.4 at 6000, #2 never: 0 0 0 0 0 1.1 1.1.
  EXPECT_EQ(g.refinement.median, (std::vector<double>{0, 0, 0, 0, 0, 1.1, 1.1}));
  EXPECT_EQ(g.agent.trajectories, 3);
  EXPECT_DOUBLE_EQ(g.agent_at_zero, 0.0);
  // Bands: at 500 every agent trajectory is at 0; at 3000 {1.2, 2.0, 0} and at 6000 {1.5, 2.0, 0}
  // give [0, 2.0]; the refinement at 4000 {1.1, 1.3, 0} gives [0, 1.3], at 6000 [0, 1.4].
  EXPECT_DOUBLE_EQ(g.agent.band[0].lower, 0.0);
  EXPECT_DOUBLE_EQ(g.agent.band[0].upper, 0.0);
  EXPECT_DOUBLE_EQ(g.agent.band[4].upper, 2.0);
  EXPECT_DOUBLE_EQ(g.agent.band[6].lower, 0.0);
  EXPECT_DOUBLE_EQ(g.agent.band[6].upper, 2.0);
  EXPECT_DOUBLE_EQ(g.refinement.band[5].upper, 1.3);
  EXPECT_DOUBLE_EQ(g.refinement.band[6].upper, 1.4);
  // Every curve ends at its Table 3 median.
  for (const auto& curve : c.curves) {
    const auto& row = row_of(c, curve.definition);
    EXPECT_DOUBLE_EQ(curve.agent.median.back(), *row.agent.rule(InstructionRule::paper).median) << curve.definition;
    EXPECT_DOUBLE_EQ(curve.refinement.median.back(), *row.refinement.rule(InstructionRule::paper).median) << curve.definition;
    for (std::size_t k = 0; k < curve.tokens.size(); ++k) {
      EXPECT_LE(curve.agent.band[k].lower, curve.agent.band[k].upper);
      if (k) {
        EXPECT_LT(curve.tokens[k - 1], curve.tokens[k]);
      }
    }
  }
  const auto& all = curve_of(c, kPooledDefinition);
  EXPECT_DOUBLE_EQ(all.tokens.back(), 10000.0) << "the agent's mha turn";
  EXPECT_DOUBLE_EQ(all.agent.median.back(), 1.25);
  // At 3000 tokens, pooled: agent {1.2, 2.0, 0, 0 (mha needs 10000)} -> 0.6.
  auto at = std::find(all.tokens.begin(), all.tokens.end(), 3000.0) - all.tokens.begin();
  EXPECT_DOUBLE_EQ(all.agent.median[static_cast<std::size_t>(at)], 0.6);

  // The pure pieces: best within a budget, inclusive at the turn's own count.
  const ComparedTrajectory& t0 = c.agent.trajectories[0];
  EXPECT_EQ(t0.cumulative_tokens, (std::vector<int64_t>{1000, 3000, 6000}));
  EXPECT_DOUBLE_EQ(best_within_tokens(t0, 2999), 0.0);
  EXPECT_DOUBLE_EQ(best_within_tokens(t0, 3000), 1.2);
  EXPECT_DOUBLE_EQ(best_within_tokens(t0, 1e9), 1.5);
}

TEST(AgentComparison, ComparabilityChecksRefuseOrWarn) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  Runs runs = build_runs(store);
  AgentComparison c = compare_agent_runs(store, runs.agent, runs.refinement);
  // Budgets 3 vs 4, and bwd only in the agent run. The model labels differ but both runs' calls
  // name the same model ("scripted"); same GPU, tag and options; both finished.
  ASSERT_EQ(c.warnings.size(), 2u) << ::testing::PrintToString(c.warnings);
  EXPECT_NE(c.warnings[0].find("the budgets differ"), std::string::npos);
  EXPECT_NE(c.warnings[1].find("agent only mha_bwd_d128"), std::string::npos);

  AgentComparisonOptions o;
  o.requests = 4;  // above the agent's budget of 3
  try {
    compare_agent_runs(store, runs.agent, runs.refinement, o);
    ADD_FAILURE() << "N above the agent's budget was compared";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("allows only 3"), std::string::npos) << e.what();
  }
  o.requests = 0;
  EXPECT_THROW(compare_agent_runs(store, runs.agent, runs.refinement, o), InputError);
  o.requests = 2;
  EXPECT_EQ(compare_agent_runs(store, runs.agent, runs.refinement, o).requests, 2);
  EXPECT_THROW(compare_agent_runs(store, runs.agent, runs.agent), InputError);
  AgentComparisonOptions bad;
  bad.bootstrap.resamples = 0;
  EXPECT_THROW(compare_agent_runs(store, runs.agent, runs.refinement, bad), InputError);
  bad = {};
  bad.bootstrap.confidence = 1.0;
  EXPECT_THROW(compare_agent_runs(store, runs.agent, runs.refinement, bad), InputError);

  std::string other = store.create_run({{"policy", "model"}, {"num_turns", 3}}, "codex", "another definition");
  add_trajectory(store, other, {"attn_other", "", "contract", 0}, {C(1000, 1.0)}, finished());
  try {
    compare_agent_runs(store, runs.agent, other);
    ADD_FAILURE() << "runs without a common definition were compared";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("share no definition"), std::string::npos) << e.what();
  }

  ScriptedTurn fake = C(1000, 1.0);
  fake.fake = true;
  std::string faked = store.create_run({{"policy", "model"}, {"num_turns", 3}}, "codex", "fake");
  add_trajectory(store, faked, {kGemm, "", "contract", 0}, {fake}, finished());
  EXPECT_THROW(compare_agent_runs(store, runs.agent, faked), InputError) << "fake-backend verdicts without allow";
  AgentComparisonOptions allow;
  allow.fake = FakeVerdicts::allow;
  AgentComparison f = compare_agent_runs(store, runs.agent, faked, allow);
  EXPECT_TRUE(f.fake());
  EXPECT_NE(render_agent_comparison_text(f).find("FAKE BACKEND"), std::string::npos);
}

TEST(AgentComparison, AnAgentRunWithoutTokensIsWarnedAndSitsAtZero) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  // No proxy: the agent's turns record 0 tokens. It is also not an MCP run and used another tag.
  ScriptedTurn x = X(100), p = C(100, 1.2);
  x.prompt_tokens = x.completion_tokens = p.prompt_tokens = p.completion_tokens = 0;
  std::string agent = store.create_run({{"policy", "model"}, {"num_turns", 2}}, "agent-x", "");
  add_trajectory(store, agent, {kGemm, "", "params", 0}, {x, p}, finished());
  std::string refinement = store.create_run({{"policy", "model"}, {"num_turns", 2}}, "agent-x", "");
  add_trajectory(store, refinement, {kGemm, "", "contract", 0}, {C(1000, 1.1)}, stopped_early());
  store.set_run_status(agent, RunStatus::finished);
  store.set_run_status(refinement, RunStatus::finished);
  AgentComparison c = compare_agent_runs(store, agent, refinement);
  std::string all;
  for (const auto& w : c.warnings) all += w + "\n";
  EXPECT_NE(all.find("is not a run of `ptxbench mcp`"), std::string::npos) << all;
  EXPECT_NE(all.find("the prompt tags differ"), std::string::npos) << all;
  EXPECT_NE(all.find("records no prompt or completion tokens"), std::string::npos) << all;
  EXPECT_EQ(all.find("the budgets differ"), std::string::npos) << all;
  const auto& g = curve_of(c, kGemm);
  EXPECT_EQ(g.tokens, (std::vector<double>{1000}));
  EXPECT_DOUBLE_EQ(g.agent_at_zero, 1.2) << "its 1.2 cost no counted token";
  EXPECT_EQ(g.agent.median, (std::vector<double>{1.2}));
  EXPECT_EQ(g.refinement.median, (std::vector<double>{1.1}));
  EXPECT_DOUBLE_EQ(*row_of(c, kGemm).ratio.total, 0.0);
}

TEST(AgentComparison, TheSameSeedGivesTheSameComparison) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  Runs runs = build_runs(store);
  AgentComparisonOptions o;
  o.bootstrap.seed = 7;
  o.bootstrap.resamples = 300;
  auto strip = [](ordered_json j) {
    j.erase("generated_at");
    return j;
  };
  auto a = strip(agent_comparison_json(compare_agent_runs(store, runs.agent, runs.refinement, o)));
  auto b = strip(agent_comparison_json(compare_agent_runs(store, runs.agent, runs.refinement, o)));
  EXPECT_EQ(a, b);
  o.bootstrap.seed = 8;
  auto other = agent_comparison_json(compare_agent_runs(store, runs.agent, runs.refinement, o));
  EXPECT_EQ(other["rows"][0]["agent"]["rules"]["paper"]["median_best"], a["rows"][0]["agent"]["rules"]["paper"]["median_best"])
      << "the medians do not depend on the seed";
  EXPECT_EQ(other["bootstrap"]["seed"], 8);
}

TEST(AgentComparison, OutputsStateTheDefinitionsAndDrawTheCurves) {
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  Runs runs = build_runs(store);
  AgentComparison c = compare_agent_runs(store, runs.agent, runs.refinement);

  std::string text = render_agent_comparison_text(c);
  EXPECT_NE(text.find("Table 3. Agent vs refinement at N = 3 evaluation requests per trajectory"), std::string::npos) << text;
  EXPECT_NE(text.find("1.500 [0.000, 2.000]"), std::string::npos) << text;
  EXPECT_NE(text.find("1.100 [0.000, 1.400]"), std::string::npos) << text;
  EXPECT_NE(text.find("0.857"), std::string::npos) << "gemm's token ratio";
  EXPECT_NE(text.find("Note, gemm_n7168_k5120: refinement: 1 not counted"), std::string::npos) << text;
  EXPECT_NE(text.find("Figure 14."), std::string::npos);
  for (const auto& d : agent_comparison_definitions(c)) EXPECT_NE(text.find(d.name + ":"), std::string::npos) << d.key;

  ordered_json j = agent_comparison_json(c);
  EXPECT_EQ(j["schema"], kAgentComparisonSchema);
  EXPECT_EQ(j["requests"], 3);
  EXPECT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["curves"].size(), 3u);
  EXPECT_EQ(j["curves"][0]["tokens"].size(), 7u);
  EXPECT_EQ(j["curves"][0]["agent"]["median"][6], 1.5);
  EXPECT_TRUE(j["definitions"].contains("bootstrap"));
  EXPECT_EQ(j["agent"]["trajectories"][0]["turns"][1]["cumulative_tokens"], 3000);

  std::string csv = agent_comparison_csv(c);
  std::size_t points = 0;
  for (const auto& curve : c.curves) points += 2 * curve.tokens.size();
  EXPECT_EQ(count(csv, ",curve_median_best_speedup,"), points);
  EXPECT_NE(csv.find("," + kGemm + ",agent,paper,median_best_speedup,,1.5,0,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("," + kGemm + ",agent,paper,curve_median_best_speedup,3000,1.2,0,2,"), std::string::npos) << csv;

  std::string html = render_agent_comparison_html(c);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "a static page";
  EXPECT_EQ(count(html, "<svg class=\"token-curve\""), 3u);
  EXPECT_EQ(count(html, "class=\"curve-median\" data-side=\"agent\""), 3u);
  EXPECT_EQ(count(html, "class=\"curve-band\" data-side=\"refinement\""), 3u);
  EXPECT_NE(html.find("id=\"agent-table3\""), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos) << "the injected run name stays text";
  EXPECT_NE(html.find("&lt;script&gt;document.title="), std::string::npos);
  for (const auto& d : agent_comparison_definitions(c)) EXPECT_NE(html.find("id=\"agent-def-" + d.key + "\""), std::string::npos);
}

TEST(AgentComparison, ThroughTheCommandLine) {
  TempDir dir;
  const std::string db = (dir.path() / "runs.db").string();
  Runs runs;
  {
    RunStore store(db);
    runs = build_runs(store);
  }
  const std::string exe = (executable_dir() / "ptxbench").string();
  fs::path out = dir.path() / "out";
  ProcessSpec spec;
  spec.argv = {exe, "report", runs.agent, "--against", runs.refinement, "--store", db, "--bootstrap", "200", "--seed", "5",
               "--html", (out / "c.html").string(), "--json", (out / "c.json").string(), "--csv", (out / "c.csv").string()};
  ProcessResult p = run_process(spec, 120);
  ASSERT_TRUE(p.status.success()) << p.out.text << p.err.text;
  EXPECT_NE(p.out.text.find("Table 3. Agent vs refinement at N = 3 evaluation requests per trajectory"), std::string::npos) << p.out.text;
  EXPECT_NE(p.out.text.find("the budgets differ"), std::string::npos);
  ordered_json j = ordered_json::parse(read_file(out / "c.json"));
  EXPECT_EQ(j["schema"], kAgentComparisonSchema);
  EXPECT_EQ(j["bootstrap"]["resamples"], 200);
  EXPECT_EQ(j["bootstrap"]["seed"], 5);
  EXPECT_DOUBLE_EQ(j["rows"][0]["agent"]["rules"]["paper"]["median_best"].get<double>(), 1.5);
  EXPECT_NE(read_file(out / "c.html").find("<svg class=\"token-curve\""), std::string::npos);
  EXPECT_NE(read_file(out / "c.csv").find(",curve_median_best_speedup,"), std::string::npos);

  // Refused with exit 2 and a reason: N above a budget, two RUNs, --budgets with --against,
  // comparison options without --against.
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
      {{exe, "report", runs.agent, "--against", runs.refinement, "--store", db, "--requests", "4"}, "allows only 3"},
      {{exe, "report", runs.agent, runs.refinement, "--against", runs.refinement, "--store", db}, "give one RUN"},
      {{exe, "report", runs.agent, "--against", runs.refinement, "--store", db, "--budgets", "1"}, "do not apply with --against"},
      {{exe, "report", runs.agent, "--store", db, "--requests", "3"}, "goes with --against"},
      {{exe, "report", runs.agent, "--against", runs.refinement, "--store", db, "--carry-forward"}, "do not apply with --against"},
      {{exe, "report", runs.agent, "--against", runs.refinement, "--store", db, "--model", "m"}, "do not apply with --against"},
  };
  for (const auto& [argv, why] : refusals) {
    ProcessSpec bad;
    bad.argv = argv;
    ProcessResult b = run_process(bad, 60);
    EXPECT_EQ(b.status.exit_code, 2) << why << "\n" << b.err.text;
    EXPECT_NE(b.err.text.find(why), std::string::npos) << b.err.text;
  }
  // "-": the JSON alone on stdout (no terminal tables around it).
  ProcessSpec to_stdout;
  to_stdout.argv = {exe, "report", runs.agent, "--against", runs.refinement, "--store", db, "--bootstrap", "50", "--json", "-"};
  ProcessResult js = run_process(to_stdout, 120);
  ASSERT_TRUE(js.status.success()) << js.err.text;
  EXPECT_EQ(ordered_json::parse(js.out.text)["schema"], kAgentComparisonSchema);
  EXPECT_FALSE(fs::exists("-")) << "no file named -";
}

// The paper's Fixit chain across runs (issue 36): largest-remainder apportionment, the original's
// seed rule on a hand-countable student run, a repair run's seed stored as its turn 0, cross-run
// pairs (the student's failure, the repairer's first fix) naming both runs, the fix rule and the
// post-balanced "fastest per definition" cap, and the held-out guard over seeds.
#include <gtest/gtest.h>

#include "../report/test_report_support.h"
#include "adapt/data_recipe.h"
#include "adapt/dataset_builder.h"
#include "adapt/seed_selection.h"
#include "adapt/sft_records.h"
#include "common/fs.h"
#include "common/sha256.h"

using namespace ptxbench;
using report::TurnLabel;

namespace {

test::ScriptedTurn scripted(const std::string& status, const std::string& text, std::optional<double> speedup = {},
                            bool target = false) {
  test::ScriptedTurn t{status, speedup, target};
  t.text = text;
  return t;
}
test::ScriptedTurn X(const std::string& text) { return scripted("COMPILE_ERROR", text); }
test::ScriptedTurn N(const std::string& text) { return scripted("INCORRECT_NUMERICAL", text); }
test::ScriptedTurn R(const std::string& text) { return scripted("RUNTIME_ERROR", text); }
test::ScriptedTurn T(const std::string& text) { return scripted("TIMEOUT", text); }
test::ScriptedTurn E(const std::string& text) { return scripted("EXTRACTION_ERROR", text); }
test::ScriptedTurn C(double speedup, bool target, const std::string& text) { return scripted("PASSED", text, speedup, target); }

/// The student run (every failed turn but a last one has feedback: each trajectory ends PASSED):
///   T0 d1 #0: X N R X C      failed X1 N2 R3 X4
///   T1 d1 #1: N N N N N T C  failed N1..N5, T6 (after turn 5: never a seed)
///   T2 d1 #2: X E X C        failed X1 X3 (E2 is no seed label)
///   T3 d2 #0: R C            failed R1
/// d1 strata (label, turn): (ce,1) 2 [T0 T2], (ce,3) 1, (ce,4) 1, (ne,1..5) 1 2 1 1 1 [(ne,2): T0 T1],
/// (re,3) 1: 11 candidates. A cap of 6 by largest remainder: floors (ce,1) 1 and (ne,2) 1 (12/11),
/// every other 6/11 → 0 with remainder 6; the 4 slots left go to the first four of those:
/// (ce,3) (ce,4) (ne,1) (ne,3). Kept, by turn then trajectory: T0t1 T1t1 T0t2 T1t3 T2t3 T0t4.
struct StudentStore {
  TempDir dir{"fixit_chain_test"};
  std::unique_ptr<RunStore> store;
  std::string student;
  std::vector<int64_t> traj;

  StudentStore() {
    store = std::make_unique<RunStore>((dir.path() / "runs.db").string());
    student = store->create_run({{"policy", "model"}, {"num_turns", 8}}, "student");
    auto end = test::stopped_early();
    traj.push_back(test::add_trajectory(*store, student, {"d1", "", "params", 0},
                                        {X("a1"), N("a2"), R("a3"), X("a4"), C(1.3, true, "a5")}, end));
    traj.push_back(test::add_trajectory(*store, student, {"d1", "", "params", 1},
                                        {N("b1"), N("b2"), N("b3"), N("b4"), N("b5"), T("b6"), C(1.2, true, "b7")}, end));
    traj.push_back(test::add_trajectory(*store, student, {"d1", "", "params", 2}, {X("c1"), E("c2"), X("c3"), C(1.1, true, "c4")}, end));
    traj.push_back(test::add_trajectory(*store, student, {"d2", "", "params", 0}, {R("d1"), C(1.5, true, "d2")}, end));
  }
  SourceSet sources(const std::vector<std::string>& runs) const {
    SourceFilter f;
    f.runs = runs;
    return read_sources(*store, f, HeldOutDefinitions::none());
  }
};

std::string where(const SourceSet& s, const FailedTurn& f) {
  return s.trajectories[f.source].info.key.definition + "#" + std::to_string(s.trajectories[f.source].info.key.index) + "t" +
         std::to_string(f.turn);
}

/// The seed of `line` (a seed_line) as a repair run stores it.
SeedTurn seed_of(const ordered_json& line) {
  SeedTurn s;
  s.source = line["wrong_source"];
  s.status = line["status"];
  s.feedback = line["feedback"];
  s.verdict = line["verdict"];
  s.origin = SeedOrigin{line["origin"]["run"], line["origin"]["trajectory"].get<int64_t>(), line["origin"]["turn"].get<int64_t>()};
  return s;
}

DataRecipe recipe(const std::string& run, const ordered_json& extra = ordered_json::object()) {
  ordered_json j = {{"name", "chain"}, {"kind", "fixit"}, {"runs", {run}}, {"shuffle_seed", 42}};
  j.update(extra);
  return data_recipe_from_json(j, "test recipe");
}

}  // namespace

TEST(Apportion, LargestRemainderByHand) {
  // 6 of {10, 5, 3}: floors 3, 1, 1 (remainders 6/18, 12/18, 0): the one left goes to the second.
  EXPECT_EQ(apportion({10, 5, 3}, 6), (std::vector<int64_t>{3, 2, 1}));
  // Equal remainders: the larger stratum first, then the earlier.
  EXPECT_EQ(apportion({1, 3, 1}, 1), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(apportion({2, 2}, 1), (std::vector<int64_t>{1, 0}));
  // Under the cap: every stratum whole.
  EXPECT_EQ(apportion({4, 0, 2}, 33), (std::vector<int64_t>{4, 0, 2}));
  // Exactly the cap, never a stratum above its size, whatever the sizes.
  for (int64_t cap : {1, 5, 33}) {
    std::vector<int64_t> sizes = {40, 1, 1, 1, 7, 0, 13};
    auto q = apportion(sizes, cap);
    int64_t sum = 0;
    for (std::size_t i = 0; i < q.size(); ++i) {
      EXPECT_LE(q[i], sizes[i]);
      sum += q[i];
    }
    EXPECT_EQ(sum, cap);
  }
}

TEST(SeedSelection, TheOriginalRuleOnAHandCountedStudentRun) {
  StudentStore s;
  SourceSet src = s.sources({s.student});
  SeedRule rule;
  rule.per_definition = 6;
  SeedSelection sel = select_seeds(src, rule);
  std::vector<std::string> kept;
  for (const auto& f : sel.kept) kept.push_back(where(src, f));
  EXPECT_EQ(kept, (std::vector<std::string>{"d1#0t1", "d1#1t1", "d1#0t2", "d1#1t3", "d1#2t3", "d1#0t4", "d2#0t1"}));
  EXPECT_EQ(sel.candidates, 12) << "11 of d1, 1 of d2; T6 is after turn 5, E2 no seed label";
  EXPECT_EQ(sel.underfilled, std::vector<std::string>{"d2"});
  ASSERT_EQ(sel.strata.size(), 10u);
  EXPECT_EQ(sel.strata[0].label, "compilation_error");
  EXPECT_EQ(sel.strata[0].turn, 1);
  EXPECT_EQ(sel.strata[0].available, 2);
  EXPECT_EQ(sel.strata[0].kept, 1);

  // The paper's cap of 33 keeps everything here; a later last turn takes T6 too.
  rule.per_definition = 33;
  EXPECT_EQ(select_seeds(src, rule).kept.size(), 12u);
  rule.turn_to = 6;
  EXPECT_EQ(select_seeds(src, rule).kept.size(), 13u);

  // A seeded choice is deterministic and keeps the same per-stratum counts.
  rule = SeedRule{};
  rule.per_definition = 6;
  rule.seed = 7;
  auto a = select_seeds(src, rule), b = select_seeds(src, rule);
  ASSERT_EQ(a.kept.size(), 7u);
  for (std::size_t i = 0; i < a.kept.size(); ++i) EXPECT_EQ(where(src, a.kept[i]), where(src, b.kept[i]));
  for (std::size_t i = 0; i < a.strata.size(); ++i) EXPECT_EQ(a.strata[i].kept, sel.strata[i].kept);

  // Each line names its source and carries the verdict and feedback the model saw.
  ordered_json line = seed_line(src, sel.kept[2], "runs.db");
  EXPECT_EQ(line["definition"], "d1");
  EXPECT_EQ(line["status"], "INCORRECT_NUMERICAL");
  EXPECT_EQ(line["feedback"], "Feedback for turn 2: a2");
  EXPECT_NE(line["wrong_source"].get<std::string>().find("// turn 2 a2"), std::string::npos);
  EXPECT_EQ(line["verdict"]["status"], "INCORRECT_NUMERICAL");
  EXPECT_EQ(line["origin"]["run"], s.student);
  EXPECT_EQ(line["origin"]["trajectory"], s.traj[0]);
  EXPECT_EQ(line["origin"]["turn"], 2);
  EXPECT_EQ(line["origin"]["label"], "numerical_error");
}

TEST(FixitChain, ARepairRunsSeedIsItsTurnZeroAndPairsAcrossRuns) {
  StudentStore s;
  SourceSet student = s.sources({s.student});
  SeedRule rule;
  rule.per_definition = 6;
  SeedSelection sel = select_seeds(student, rule);
  // The repair run: the first three seeds; the repairer fails once, then fixes (with wgmma).
  std::string repair = s.store->create_run({{"policy", "expert"}, {"num_turns", 3}}, "teacher");
  std::vector<ordered_json> lines;
  for (int i = 0; i < 3; ++i) {
    lines.push_back(seed_line(student, sel.kept[static_cast<std::size_t>(i)], "runs.db"));
    std::string tag = "t" + std::to_string(i);
    test::add_trajectory(*s.store, repair, {"d1", "", "params+repair", i}, {N(tag + "x"), C(1.0 + i, true, tag + "fix")},
                         test::stopped_early(), seed_of(lines.back()));
  }
  // Stored as turn 0, outside the model's turns.
  auto trajectories = s.store->list_trajectories(repair);
  ASSERT_EQ(trajectories.size(), 3u);
  auto stored = s.store->seed_turn(trajectories[0].id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->source, lines[0]["wrong_source"]);
  EXPECT_EQ(stored->status, "COMPILE_ERROR");
  ASSERT_TRUE(stored->origin);
  EXPECT_EQ(stored->origin->run_id, s.student);
  EXPECT_EQ(stored->origin->turn, 1);
  EXPECT_EQ(s.store->turns(trajectories[0].id).front().turn, 1);
  EXPECT_FALSE(s.store->seed_turn(s.traj[0])) << "a plain trajectory has no seed";

  // Seeds only: each seed pairs with the repair's first fix (turn 2), naming both runs.
  DatasetPlan seeds = plan_dataset(*s.store, recipe(repair, {{"pairs_from", "seeds"}}));
  ASSERT_EQ(seeds.fixit.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const RepairPair& p = seeds.fixit[i];
    SftRecord r = fixit_record(p, std::nullopt, HeldOutDefinitions::none());
    ordered_json meta = r.meta.to_json();
    EXPECT_EQ(meta["pair"], "cross_run");
    EXPECT_EQ(meta["run"], repair);
    EXPECT_EQ(meta["turn"], 2);
    EXPECT_EQ(meta["wrong_run"], s.student);
    EXPECT_EQ(meta["wrong_trajectory"], lines[i]["origin"]["trajectory"]);
    EXPECT_EQ(meta["wrong_turn"], lines[i]["origin"]["turn"]);
    EXPECT_EQ(meta["wrong_status"], lines[i]["status"]);
    ASSERT_EQ(r.messages.size(), 5u);
    EXPECT_EQ(r.messages[2].content, "```cuda\n" + lines[i]["wrong_source"].get<std::string>() + "```\n");
    EXPECT_EQ(r.messages[3].content, lines[i]["feedback"]);
    EXPECT_NE(r.messages[4].content.find("t" + std::to_string(i) + "fix"), std::string::npos);
  }
  // The model's own failures only: within the trajectory; all: both kinds.
  DatasetPlan own = plan_dataset(*s.store, recipe(repair, {{"pairs_from", "trajectories"}}));
  ASSERT_EQ(own.fixit.size(), 3u);
  EXPECT_EQ(fixit_record(own.fixit[0], std::nullopt, HeldOutDefinitions::none()).meta.to_json()["pair"], "within_trajectory");
  EXPECT_EQ(plan_dataset(*s.store, recipe(repair)).fixit.size(), 6u);
  // The turn filter reads a seed's source turn: seeds from source turns 2..4 only.
  EXPECT_EQ(plan_dataset(*s.store, recipe(repair, {{"pairs_from", "seeds"}, {"turns", {{"from", 2}, {"to", 4}}}})).fixit.size(), 1u)
      << "the three seeds are from source turns 1, 1, 2";
}

TEST(FixitChain, FixRuleFastestCapAndTheHeldOutGuard) {
  StudentStore s;
  std::string repair = s.store->create_run({{"policy", "expert"}, {"num_turns", 3}}, "teacher");
  SourceSet student = s.sources({s.student});
  SeedSelection sel = select_seeds(student, SeedRule{});
  // Fixes: without wgmma (0.9×), slow (0.04×), 1.5×, 2.5×; one seed of the held-out d2.
  const std::vector<test::ScriptedTurn> answers = {C(0.9, false, "notarget"), C(0.04, true, "slow"), C(1.5, true, "fast"),
                                                   C(2.5, true, "fastest")};
  for (std::size_t i = 0; i < answers.size(); ++i)
    test::add_trajectory(*s.store, repair, {"d1", "", "params+repair", static_cast<int64_t>(i)}, {answers[i]},
                         test::stopped_early(), seed_of(seed_line(student, sel.kept[i], "runs.db")));
  ordered_json d2_line = seed_line(student, sel.kept.back(), "runs.db");
  ASSERT_EQ(d2_line["definition"], "d2");
  test::add_trajectory(*s.store, repair, {"d2", "", "params+repair", 0}, {C(3.0, true, "d2fix")}, test::stopped_early(),
                       seed_of(d2_line));

  // Default: a fix must run its target instructions, so the first seed has none.
  DatasetPlan def = plan_dataset(*s.store, recipe(repair, {{"pairs_from", "seeds"}}));
  EXPECT_EQ(def.fixit.size(), 4u);
  EXPECT_EQ(def.pairs.no_fix, 1);
  EXPECT_EQ(plan_dataset(*s.store, recipe(repair, {{"pairs_from", "seeds"}, {"fixes", {{"target_instruction", false}}}})).fixit.size(), 5u);
  // The paper's post-balanced set: fixes above 0.05×, the fastest 1 per definition.
  DatasetPlan post = plan_dataset(
      *s.store, recipe(repair, {{"pairs_from", "seeds"},
                                {"fixes", {{"min_speedup", 0.05}}},
                                {"balance", {{"mode", "post"}, {"cap_per_stratum", 1}, {"strata", "definition"}, {"keep", "fastest"}}}}));
  EXPECT_EQ(post.pairs.slow_fix, 1);
  ASSERT_EQ(post.fixit.size(), 2u);
  EXPECT_NE(post.fixit[0].fixed_source.find("fastest"), std::string::npos);
  EXPECT_EQ(post.fixit[1].definition(), "d2");
  // Held out: d2's seed is never read, and no record of it can be written.
  DatasetPlan held = plan_dataset(*s.store, recipe(repair, {{"pairs_from", "seeds"}, {"held_out", {"d2"}}}));
  EXPECT_EQ(held.fixit.size(), 3u);
  EXPECT_EQ(held.sources.held_out_skipped, 1);
  RepairPair d2_pair = def.fixit.back();
  ASSERT_EQ(d2_pair.definition(), "d2");
  EXPECT_THROW(fixit_record(d2_pair, std::nullopt, HeldOutDefinitions({"d2"})), HeldOutViolation);
  // "fastest" ranks fixes: only for post-balanced fixit recipes.
  EXPECT_THROW(recipe(repair, {{"balance", {{"mode", "pre"}, {"cap_per_stratum", 1}, {"keep", "fastest"}}}}), InputError);
}

TEST(Table12Recipes, TheSixRecipesReadWithThePapersScopes) {
  const fs::path dir = fs::path(PTXBENCH_SOURCE_DIR) / "configs" / "recipes";
  std::vector<DataRecipe> r;
  for (int i = 1; i <= 6; ++i) r.push_back(load_data_recipe(dir / ("s" + std::to_string(i) + ".json")));
  const std::vector<std::string> four = {"mha_with_lse_d128", "mha_with_lse_d128_causal", "mha_bwd_d128", "mha_bwd_d128_causal"};
  EXPECT_EQ(r[0].problem_set, four);
  EXPECT_EQ(r[1].problem_set, four);
  for (int i = 2; i < 6; ++i) EXPECT_EQ(r[static_cast<std::size_t>(i)].problem_set.size(), 8u) << "s" << i + 1;
  EXPECT_EQ(r[0].turn_to, 4) << "s1: the original's turns 0-3";
  EXPECT_EQ(r[1].turn_to, 8) << "s2: Extended, all 8 source turns";
  for (const auto& x : r) {
    EXPECT_EQ(x.kind, RecordKind::fixit);
    EXPECT_EQ(x.pairs_from, PairSource::seeds);
    EXPECT_TRUE(x.fixes.require_target_instruction);
    EXPECT_EQ(x.held_out.size(), 3u) << "the GQA classes";
    ASSERT_TRUE(x.teacher);
  }
  EXPECT_EQ(r[3].balance, BalanceMode::post);
  EXPECT_EQ(r[3].cap_per_stratum, 28);
  EXPECT_EQ(r[3].balance_keep, BalanceKeep::fastest);
  EXPECT_EQ(r[3].balance_strata, BalanceStrata::definition);
  EXPECT_EQ(r[3].fixes.min_speedup, 0.05);
  EXPECT_EQ(r[4].balance, BalanceMode::none);
  EXPECT_EQ(r[4].teacher->model, "z-ai/glm-5.2");
  EXPECT_EQ(r[5].teacher->model, "Qwen/Qwen3.6-27B");
  // Read back from the manifest's copy: the same recipe.
  for (const auto& x : r) EXPECT_EQ(data_recipe_from_json(x.to_json()).sha256(), x.sha256());
}

// Fine-tuning data from stored runs (issue 19): failed-turn selection and balancing against hand
// counts, seeding, wrong→fixed pairs and correct kernels from a scripted store, golden JSONL records
// and the loss-mask convention, byte-for-byte determinism, the held-out guard (recipe, reader and
// record builders), the teacher's resynthesis and cache against a fake OpenAI-compatible provider,
// and recipe validation.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>

#include "../report/test_report_support.h"
#include "adapt/data_recipe.h"
#include "adapt/dataset_builder.h"
#include "adapt/reasoning_synthesis.h"
#include "adapt/repair_pairs.h"
#include "adapt/sft_records.h"
#include "adapt/turn_selection.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/sqlite_db.h"
#include "helpers/fake_teacher.h"
#include "service/http_server.h"

using namespace ptxbench;
using report::TurnLabel;

namespace {

// ---- the scripted store

test::ScriptedTurn turn(const std::string& status, const std::string& text) {
  test::ScriptedTurn t{status};
  t.text = text;
  return t;
}
test::ScriptedTurn X(const std::string& text) { return turn("COMPILE_ERROR", text); }
test::ScriptedTurn N(const std::string& text) { return turn("INCORRECT_NUMERICAL", text); }
test::ScriptedTurn R(const std::string& text) { return turn("RUNTIME_ERROR", text); }
test::ScriptedTurn T(const std::string& text) { return turn("TIMEOUT", text); }
test::ScriptedTurn E(const std::string& text) { return turn("EXTRACTION_ERROR", text); }
test::ScriptedTurn I(const std::string& text) { return turn("INFRA_ERROR", text); }
test::ScriptedTurn C(double speedup, bool target, const std::string& text) {
  test::ScriptedTurn t = turn("PASSED", text);
  t.speedup = speedup;
  t.target = target;
  return t;
}

/// Run one (model-1), every text distinct so no two candidates share a hash:
///   T1 gemm_a #0: X N C(1.3,t)          failed: X1 N2            pairs: X1->3, N2->3
///   T2 gemm_a #1: X C(0.9,no target) R C(1.1,t)  failed: X1 R3  pairs: X1->4 (not 2), R3->4
///   T3 gemm_a #2: X X X                 failed: X1 X2 X3         no fix
///   T4 mha_b  #0: TIMEOUT C(1.5,t)      failed: T1 (kernel)      pair:  T1->2
///   T5 mha_b  #1: E N C(1.2,t)          failed: N2 (E1 not by default) pair: N2->3 (E1->3 when asked)
///   T6 mha_held #0: X C(1.4,t)          held out in most recipes
///   T7 gemm_a #3: INFRA X C(1.25,t)     failed: X2 (INFRA never)  pair: X2->3
/// Default labels, no balance: 10 failed turns; gemm_a compilation 6 (pairs 3), numerical 1 (1),
/// runtime 1 (1); mha_b kernel_timeout 1 (1), numerical 1 (1): 7 pairs, 3 without a fix.
/// Correct + target kernels: T1t3 T2t4 T4t2 T5t3 T7t3 (+ T6t2 held out).
/// Run two (model-2): gemm_a #0: X C(1.3,t): one more gemm_a compilation pair.
struct Store {
  TempDir dir{"data_pipeline_test"};
  std::unique_ptr<RunStore> store;
  std::string run1, run2;
  int64_t held_trajectory = 0;

  Store() {
    store = std::make_unique<RunStore>((dir.path() / "runs.db").string());
    run1 = store->create_run({{"policy", "model"}, {"num_turns", 4}}, "model-1");
    auto end = test::finished();
    test::add_trajectory(*store, run1, {"gemm_a", "", "params", 0}, {X("g0t1"), N("g0t2"), C(1.3, true, "g0t3")}, end);
    test::add_trajectory(*store, run1, {"gemm_a", "", "params", 1},
                         {X("g1t1"), C(0.9, false, "g1t2"), R("g1t3"), C(1.1, true, "g1t4")}, end);
    test::add_trajectory(*store, run1, {"gemm_a", "", "params", 2}, {X("g2t1"), X("g2t2"), X("g2t3")}, end);
    test::add_trajectory(*store, run1, {"mha_b", "", "params", 0}, {T("m0t1"), C(1.5, true, "m0t2")}, test::stopped_early());
    test::add_trajectory(*store, run1, {"mha_b", "", "params", 1}, {E("m1t1"), N("m1t2"), C(1.2, true, "m1t3")}, end);
    held_trajectory =
        test::add_trajectory(*store, run1, {"mha_held", "", "params", 0}, {X("h0t1"), C(1.4, true, "h0t2")}, end);
    test::add_trajectory(*store, run1, {"gemm_a", "", "params", 3}, {I("g3t1"), X("g3t2"), C(1.25, true, "g3t3")}, end);
    run2 = store->create_run({{"policy", "model"}, {"num_turns", 4}}, "model-2");
    test::add_trajectory(*store, run2, {"gemm_a", "", "params", 0}, {X("r2t1"), C(1.3, true, "r2t2")}, end);
  }
};

ordered_json recipe_json(const std::string& run, const std::string& kind = "fixit") {
  return {{"name", "test-" + kind}, {"kind", kind}, {"runs", {run}}, {"problem_set", "all"},
          {"held_out", {"mha_held"}}, {"shuffle_seed", 7}};
}

DataRecipe recipe_of(const ordered_json& j) { return data_recipe_from_json(j, "test recipe"); }

std::vector<std::string> stratum_rows(const std::vector<StratumCount>& strata) {
  std::vector<std::string> out;
  for (const auto& s : strata)
    out.push_back(s.stratum.definition + "/" + s.stratum.label + " " + std::to_string(s.available) + "/" + std::to_string(s.kept));
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> dataset_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const char* f : {"train.jsonl", "eval.jsonl", "manifest.json", "composition.html", "dataset_info.json"})
    out.push_back(read_file(dir / f));
  return out;
}

using fakes::FakeTeacher;

/// A valid reasoning that depends only on the prompt, so any two builds get the same one.
std::string deterministic_reasoning(const std::string& user) {
  std::string body = "I read the feedback first and trace it to the part of my previous kernel that causes it (" +
                     sha256_hex(user).substr(0, 12) + "). ";
  while (body.size() < 300) body += "Then I check the tile shapes, the barrier phases and the shared-memory budget. ";
  return "<reasoning>\n" + body + "\n</reasoning>";
}

}  // namespace

// ---- selection and balance

TEST(DataSelection, ReadsTheProblemSetAndSkipsHeldOutTrajectoriesUnread) {
  Store s;
  SourceSet all = read_sources(*s.store, {{s.run1}, std::nullopt, false}, HeldOutDefinitions({"mha_held"}));
  EXPECT_EQ(all.counts.runs, 1);
  EXPECT_EQ(all.counts.trajectories_read, 6);
  EXPECT_EQ(all.counts.held_out_skipped, 1);
  EXPECT_EQ(all.counts.outside_problem_set, 0);
  for (const auto& t : all.trajectories) EXPECT_NE(t.definition(), "mha_held");
  ASSERT_FALSE(all.trajectories.empty());
  EXPECT_EQ(all.trajectories.front().system, "rules");
  EXPECT_EQ(all.trajectories.front().task, "task for gemm_a");
  // Canonical order: definition, then index, whatever the insertion order (T7 was stored last).
  std::vector<std::string> order;
  for (const auto& t : all.trajectories) order.push_back(t.definition() + "#" + std::to_string(t.info.key.index));
  EXPECT_EQ(order, (std::vector<std::string>{"gemm_a#0", "gemm_a#1", "gemm_a#2", "gemm_a#3", "mha_b#0", "mha_b#1"}));

  SourceSet gemm = read_sources(*s.store, {{s.run1}, std::vector<std::string>{"gemm_a"}, false}, HeldOutDefinitions({"mha_held"}));
  EXPECT_EQ(gemm.counts.trajectories_read, 4);
  EXPECT_EQ(gemm.counts.outside_problem_set, 2);
  EXPECT_EQ(gemm.counts.held_out_skipped, 1);

  EXPECT_THROW(read_sources(*s.store, {{"no-such-run"}, std::nullopt, false}, HeldOutDefinitions::none()), InputError);

  // A listed definition that no trajectory belongs to is reported, not silently empty.
  auto j = recipe_json(s.run1);
  j["problem_set"] = {"gemm_a", "gemm_typo"};
  DatasetPlan plan = plan_dataset(*s.store, recipe_of(j));
  EXPECT_EQ(plan.missing_definitions, std::vector<std::string>{"gemm_typo"});
  EXPECT_NE(describe_plan(recipe_of(j), plan).find("without any trajectory in these runs: gemm_typo"), std::string::npos);
}

TEST(DataSelection, FailedTurnsByLabelAndTurnAgainstHandCounts) {
  Store s;
  SourceSet src = read_sources(*s.store, {{s.run1}, std::nullopt, false}, HeldOutDefinitions({"mha_held"}));
  auto failed = select_failed_turns(src, TurnFilter{});
  EXPECT_EQ(failed.size(), 10u);
  std::map<std::pair<std::string, TurnLabel>, int> by;
  for (const auto& f : failed) ++by[{f.definition, f.label}];
  EXPECT_EQ((by[{"gemm_a", TurnLabel::compilation_error}]), 6);
  EXPECT_EQ((by[{"gemm_a", TurnLabel::numerical_error}]), 1);
  EXPECT_EQ((by[{"gemm_a", TurnLabel::runtime_error}]), 1);
  EXPECT_EQ((by[{"mha_b", TurnLabel::kernel_timeout}]), 1);
  EXPECT_EQ((by[{"mha_b", TurnLabel::numerical_error}]), 1);

  auto second = select_failed_turns(src, TurnFilter{2, 2, default_failure_labels()});
  EXPECT_EQ(second.size(), 4u);  // T1 N2, T3 X2, T5 N2, T7 X2
  for (const auto& f : second) EXPECT_EQ(f.turn, 2);

  auto extraction = select_failed_turns(src, TurnFilter{1, 100, {TurnLabel::extraction_error}});
  ASSERT_EQ(extraction.size(), 1u);
  EXPECT_EQ(extraction[0].definition, "mha_b");
  EXPECT_EQ(extraction[0].turn, 1);
  // INFRA_ERROR is ours, never a failure to learn from, even when asked for.
  EXPECT_TRUE(select_failed_turns(src, TurnFilter{1, 100, {TurnLabel::infra_error}}).empty());
}

TEST(DataSelection, PairsFromAScriptedStore) {
  Store s;
  SourceSet src = read_sources(*s.store, {{s.run1}, std::nullopt, false}, HeldOutDefinitions({"mha_held"}));
  PairSet p = repair_pairs(src, select_failed_turns(src, TurnFilter{}));
  EXPECT_EQ(p.counts.failed_turns, 10);
  EXPECT_EQ(p.counts.no_fix, 3);
  EXPECT_EQ(p.counts.pairs, 7);
  EXPECT_EQ(p.counts.duplicates, 0);
  std::vector<std::string> got;
  for (const auto& pair : p.pairs)
    got.push_back(pair.definition() + "#" + std::to_string(pair.key.index) + " " + std::to_string(pair.wrong_turn) + "->" +
                  std::to_string(pair.fixed_turn));
  EXPECT_EQ(got, (std::vector<std::string>{"gemm_a#0 1->3", "gemm_a#0 2->3", "gemm_a#1 1->4", "gemm_a#1 3->4",
                                           "gemm_a#3 2->3", "mha_b#0 1->2", "mha_b#1 2->3"}));
  // The fix is the first later PASSED and target-instruction-correct turn: T2 turn 2 (no target) is passed over.
  const RepairPair& t2 = p.pairs[2];
  EXPECT_EQ(t2.wrong_status, "COMPILE_ERROR");
  EXPECT_EQ(t2.wrong_label, TurnLabel::compilation_error);
  EXPECT_EQ(t2.wrong_feedback, "Feedback for turn 1: g1t1");
  EXPECT_NE(t2.wrong_source.find("g1t1"), std::string::npos);
  EXPECT_EQ(*t2.wrong_sha256, sha256_hex(t2.wrong_source));
  EXPECT_NE(t2.fixed_source.find("g1t4"), std::string::npos);
  EXPECT_EQ(t2.fixed_sha256, sha256_hex(t2.fixed_source));
  ASSERT_TRUE(t2.fixed_speedup);
  EXPECT_DOUBLE_EQ(*t2.fixed_speedup, 1.1);

  // An extraction error pairs without a candidate: the answer stands in for the kernel.
  PairSet e = repair_pairs(src, select_failed_turns(src, TurnFilter{1, 100, {TurnLabel::extraction_error}}));
  ASSERT_EQ(e.pairs.size(), 1u);
  EXPECT_FALSE(e.pairs[0].wrong_sha256);
  EXPECT_NE(e.pairs[0].wrong_answer.find("Answer 1: m1t1"), std::string::npos);

  KernelSet k = correct_kernels(src, 1, 100);
  EXPECT_EQ(k.counts.correct_turns, 5);
  EXPECT_EQ(k.counts.kernels, 5);
  EXPECT_EQ(correct_kernels(src, 1, 3).counts.kernels, 4);  // T2's turn-4 kernel is out of range

  // Kernels are deduplicated by candidate hash within a definition, not across definitions.
  SourceSet twin;
  for (const char* def : {"d1", "d2", "d1"}) {
    SourceTrajectory t;
    t.run_id = "r";
    t.info.key.definition = def;
    TurnRecord r;
    r.turn = 1;
    r.status = "PASSED";
    r.correct = r.target_instruction = true;
    r.candidate_source = "same kernel";
    r.candidate_sha256 = sha256_hex("same kernel");
    t.turns = {r};
    t.labels = {TurnLabel::correct};
    twin.trajectories.push_back(t);
  }
  KernelSet twins = correct_kernels(twin, 1, 10);
  EXPECT_EQ(twins.counts.kernels, 2);
  EXPECT_EQ(twins.counts.duplicates, 1);
}

TEST(DataSelection, BalancingCountsPerStratumPreAndPost) {
  Store s;
  auto j = recipe_json(s.run1);
  j["balance"] = {{"mode", "none"}};
  DatasetPlan none = plan_dataset(*s.store, recipe_of(j));
  EXPECT_EQ(none.failed_turns, 10);
  EXPECT_EQ(none.fixit.size(), 7u);
  EXPECT_EQ(stratum_rows(none.strata),
            (std::vector<std::string>{"gemm_a/compilation_error 3/3", "gemm_a/numerical_error 1/1", "gemm_a/runtime_error 1/1",
                                      "mha_b/kernel_timeout 1/1", "mha_b/numerical_error 1/1"}));

  // post: pair everything, then cap the pairs: gemm_a compilation 3 -> 2, everything else as it is.
  j["balance"] = {{"mode", "post"}, {"cap_per_stratum", 2}};
  DatasetPlan post = plan_dataset(*s.store, recipe_of(j));
  EXPECT_EQ(post.fixit.size(), 6u);
  EXPECT_EQ(stratum_rows(post.strata),
            (std::vector<std::string>{"gemm_a/compilation_error 3/2", "gemm_a/numerical_error 1/1", "gemm_a/runtime_error 1/1",
                                      "mha_b/kernel_timeout 1/1", "mha_b/numerical_error 1/1"}));
  j["balance"] = {{"mode", "post"}, {"cap_per_stratum", 1}};
  EXPECT_EQ(plan_dataset(*s.store, recipe_of(j)).fixit.size(), 5u);

  // pre: cap the failed turns (6 compilation errors -> 2), then pair: 4 pairs from the other strata
  // plus those of the 2 kept compilation errors that have a fix (3 of the 6 do).
  j["balance"] = {{"mode", "pre"}, {"cap_per_stratum", 2}};
  DatasetPlan pre = plan_dataset(*s.store, recipe_of(j));
  EXPECT_EQ(stratum_rows(pre.strata),
            (std::vector<std::string>{"gemm_a/compilation_error 6/2", "gemm_a/numerical_error 1/1", "gemm_a/runtime_error 1/1",
                                      "mha_b/kernel_timeout 1/1", "mha_b/numerical_error 1/1"}));
  EXPECT_EQ(pre.pairs.failed_turns, 6);
  int64_t compile_pairs = 0;
  for (const auto& p : pre.fixit) compile_pairs += p.wrong_label == TurnLabel::compilation_error;
  EXPECT_EQ(pre.pairs.no_fix, 2 - compile_pairs);
  EXPECT_EQ(static_cast<int64_t>(pre.fixit.size()), 4 + compile_pairs);

  // kernelgen: per definition (gemm_a 3 kernels, mha_b 2), cap 1.
  auto k = recipe_json(s.run1, "kernelgen");
  k["balance"] = {{"mode", "post"}, {"cap_per_stratum", 1}};
  DatasetPlan kg = plan_dataset(*s.store, recipe_of(k));
  EXPECT_EQ(stratum_rows(kg.strata), (std::vector<std::string>{"gemm_a/correct 3/1", "mha_b/correct 2/1"}));
  EXPECT_EQ(kg.kernelgen.size(), 2u);

  // Several runs: run two adds one gemm_a compilation pair.
  auto both = recipe_json(s.run1);
  both["runs"] = "all";
  DatasetPlan all = plan_dataset(*s.store, recipe_of(both));
  EXPECT_EQ(all.runs.size(), 2u);
  EXPECT_EQ(all.fixit.size(), 8u);
}

TEST(DataSelection, SeedingIsReproducibleAndTheSeedMatters) {
  Store s;
  auto chosen = [&](uint64_t seed) {
    std::set<std::string> out;
    SourceSet src = read_sources(*s.store, {{s.run1}, std::nullopt, false}, HeldOutDefinitions({"mha_held"}));
    auto failed = select_failed_turns(src, TurnFilter{});
    std::vector<Stratum> strata;
    for (const auto& f : failed) strata.push_back({f.definition, report::label_key(f.label)});
    for (auto i : balance_strata(strata, 2, seed).kept)
      out.insert(std::to_string(src.trajectories[failed[i].source].info.key.index) + ":" + std::to_string(failed[i].turn));
    return out;
  };
  EXPECT_EQ(chosen(1), chosen(1));
  bool differs = false;
  for (uint64_t seed = 2; seed < 20 && !differs; ++seed) differs = chosen(seed) != chosen(1);
  EXPECT_TRUE(differs) << "no other seed chose differently among 15 possible pairs of 6 compilation errors";

  // The seed derivation, computed independently: SHA-256("2:42" "5:split"), first 16 hex digits.
  EXPECT_EQ(derive_seed(42, "split"), 540543480388238034ull);
  auto p = seeded_permutation(10, 42);
  EXPECT_EQ(p, seeded_permutation(10, 42));
  std::vector<std::size_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_NE(p, sorted);
}

// ---- records

TEST(DataRecords, GoldenFixitAndKernelgenLines) {
  RepairPair p;
  p.run_id = "run-1";
  p.trajectory_id = 7;
  p.key = {"gemm_a", "wl-1", "params", 0};
  p.system = "SYS";
  p.task = "TASK";
  p.wrong_turn = 1;
  p.wrong_label = TurnLabel::compilation_error;
  p.wrong_status = "COMPILE_ERROR";
  p.wrong_source = "int a;\n";
  p.wrong_sha256 = sha256_hex(p.wrong_source);
  p.wrong_answer = "ans";
  p.wrong_feedback = "FB";
  p.fixed_turn = 2;
  p.fixed_source = "int b;\n";
  p.fixed_sha256 = sha256_hex(p.fixed_source);
  p.fixed_speedup = 1.5;
  EXPECT_EQ(p.pair_hash(), "eb0e6423da4803702d9c11749bc703e535fc9a53717ee08de29fc6ade8f11e60");  // computed independently

  SftRecord fix = fixit_record(p, RecordReasoning{"because", "teacher-x", 2}, HeldOutDefinitions::none());
  const std::string a = "386593f1475dc210d45a5f3d4b6bb11c065fc6fe2e08ebdd00ab4cf3a0848744";
  const std::string b = "9f0576e20ec48d16fa8aac96a27e3c83a0b019fc9bc7abd1accd44287c157381";
  const std::string head =
      R"({"role":"system","content":"SYS"},{"role":"user","content":"TASK"},{"role":"assistant","content":"```cuda\nint a;\n```\n"},{"role":"user","content":"FB"})";
  const std::string last = R"({"role":"assistant","content":"<think>\nbecause\n</think>\n\n```cuda\nint b;\n```\n"})";
  EXPECT_EQ(fix.jsonl_line(),
            R"({"messages":[)" + head + "," + last + R"(],"prompt":[)" + head + R"(],"completion":[)" + last +
                R"(],"meta":{"kind":"fixit","id":"eb0e6423da4803702d9c11749bc703e535fc9a53717ee08de29fc6ade8f11e60","run":"run-1","trajectory":7,"definition":"gemm_a","workload":"wl-1","prompt_tag":"params","trajectory_index":0,"turn":2,"label":"compilation_error","pair":"within_trajectory","wrong_run":"run-1","wrong_trajectory":7,"wrong_turn":1,"wrong_status":"COMPILE_ERROR","wrong_sha256":")" +
                a + R"(","status":"PASSED","sha256":")" + b +
                R"(","speedup":1.5,"teacher_model":"teacher-x","reasoning_attempts":2}})" + "\n");

  CorrectKernel k;
  k.run_id = "run-1";
  k.trajectory_id = 7;
  k.key = {"gemm_a", "wl-1", "params", 0};
  k.system = "SYS";
  k.task = "TASK";
  k.turn = 2;
  k.source = "int b;\n";
  k.sha256 = b;
  k.speedup = 1.5;
  SftRecord gen = kernelgen_record(k, std::nullopt, HeldOutDefinitions::none());
  const std::string gen_head = R"({"role":"system","content":"SYS"},{"role":"user","content":"TASK"})";
  const std::string gen_last = R"({"role":"assistant","content":"```cuda\nint b;\n```\n"})";
  EXPECT_EQ(gen.jsonl_line(),
            R"({"messages":[)" + gen_head + "," + gen_last + R"(],"prompt":[)" + gen_head + R"(],"completion":[)" + gen_last +
                R"(],"meta":{"kind":"kernelgen","id":"06eab2669beb5b67c73cc949664b807dcb13cbc6aec1560733a74eb83f9f721b)" +
                R"(","run":"run-1","trajectory":7,"definition":"gemm_a","workload":"wl-1","prompt_tag":"params","trajectory_index":0,"turn":2,"label":"correct","status":"PASSED","sha256":")" +
                b + R"(","speedup":1.5,"teacher_model":null,"reasoning_attempts":0}})" + "\n");

  // A kernel holding a fence gets a longer one, so the block cannot close early.
  EXPECT_EQ(final_answer(std::nullopt, "a\n```\nb"), "````cuda\na\n```\nb\n````\n");
}

TEST(DataRecords, LossFallsOnTheLastAssistantMessageOnly) {
  Store s;
  TempDir out{"data_loss_mask"};
  auto fix = recipe_json(s.run1);
  fix["labels"] = {"compilation_error", "numerical_error", "runtime_error", "kernel_timeout", "extraction_error"};
  build_dataset(*s.store, recipe_of(fix), out.path() / "fixit");
  build_dataset(*s.store, recipe_of(recipe_json(s.run1, "kernelgen")), out.path() / "kernelgen");
  int records = 0;
  for (const char* kind : {"fixit", "kernelgen"}) {
    for (const auto& line : lines_of(read_file(out.path() / kind / "train.jsonl"))) {
      ++records;
      auto j = ordered_json::parse(line);
      const auto& m = j["messages"];
      ASSERT_GE(m.size(), 2u);
      // TRL: prompt + completion is the chat, and the completion is exactly the last assistant message.
      ordered_json joined = j["prompt"];
      for (const auto& c : j["completion"]) joined.push_back(c);
      EXPECT_EQ(joined, m);
      ASSERT_EQ(j["completion"].size(), 1u);
      EXPECT_EQ(j["completion"][0]["role"], "assistant");
      // LLaMA-Factory sharegpt: an optional system message, then user/assistant alternating, ending
      // with the assistant (mask_history trains that last one only).
      std::size_t first = m[0]["role"] == "system" ? 1 : 0;
      EXPECT_EQ((m.size() - first) % 2, 0u);
      for (std::size_t i = first; i < m.size(); ++i) EXPECT_EQ(m[i]["role"], (i - first) % 2 == 0 ? "user" : "assistant");
      EXPECT_EQ(m.size(), std::string(kind) == "fixit" ? 5u : 3u);
      EXPECT_EQ(j["meta"]["kind"], kind);
      EXPECT_NE(j["meta"]["definition"], "mha_held");
    }
  }
  EXPECT_EQ(records, 8 + 5);
  auto info = ordered_json::parse(read_file(out.path() / "fixit" / "dataset_info.json"));
  EXPECT_EQ(info["test-fixit_train"]["formatting"], "sharegpt");
  EXPECT_EQ(info["test-fixit_train"]["tags"]["system_tag"], "system");
}

// ---- the dataset folder

TEST(DataBuild, ManifestCountsSharesAndFileHashes) {
  Store s;
  TempDir out{"data_manifest"};
  auto j = recipe_json(s.run1);
  j["split"] = {{"eval_fraction", 0.25}};
  BuildResult r = build_dataset(*s.store, recipe_of(j), out.path());
  EXPECT_EQ(r.records, 7);
  auto m = ordered_json::parse(read_file(out.path() / "manifest.json"));
  EXPECT_EQ(m, r.manifest);
  EXPECT_EQ(m["schema"], kDatasetManifestSchema);
  EXPECT_EQ(m["recipe_sha256"], recipe_of(j).sha256());
  EXPECT_EQ(m["recipe"], recipe_of(j).to_json());
  EXPECT_EQ(m["records"]["total"], 7);
  // 7 records from 5 trajectories (T1, T2, T7, T4, T5); 0.25 x 5 rounds to 1 eval trajectory.
  EXPECT_EQ(m["split"]["trajectories"], 5);
  EXPECT_EQ(m["split"]["eval_trajectories"], 1);
  EXPECT_EQ(m["records"]["train"].get<int>() + m["records"]["eval"].get<int>(), 7);
  EXPECT_GE(m["records"]["eval"].get<int>(), 1);
  EXPECT_LE(m["records"]["eval"].get<int>(), 2);
  EXPECT_EQ(m["selection"]["sources"]["trajectories_read"], 6);
  EXPECT_EQ(m["selection"]["sources"]["held_out_skipped"], 1);
  EXPECT_EQ(m["selection"]["failed_turns"], 10);
  EXPECT_EQ(m["selection"]["pairs"]["pairs"], 7);
  EXPECT_EQ(m["selection"]["pairs"]["no_fix"], 3);
  EXPECT_EQ(m["selection"]["kept"], 7);
  // Shares: per definition gemm_a 5 (3 compilation + numerical + runtime), mha_b 2.
  const auto& defs = m["shares"]["definition"];
  ASSERT_EQ(defs.size(), 2u);
  EXPECT_EQ(defs[0]["key"], "gemm_a");
  EXPECT_EQ(defs[0]["records"], 5);
  EXPECT_DOUBLE_EQ(defs[0]["share"].get<double>(), 0.7143);
  EXPECT_EQ(defs[1]["records"], 2);
  EXPECT_DOUBLE_EQ(defs[1]["share"].get<double>(), 0.2857);
  std::map<std::string, int> labels, turns;
  for (const auto& row : m["shares"]["label"]) labels[row["key"]] = row["records"];
  for (const auto& row : m["shares"]["turn"]) turns[row["key"]] = row["records"];
  EXPECT_EQ(labels, (std::map<std::string, int>{{"compilation_error", 3}, {"kernel_timeout", 1}, {"numerical_error", 2}, {"runtime_error", 1}}));
  // By the wrong turn: turn 1: T1 X, T2 X, T4 TIMEOUT; turn 2: T1 N, T7 X, T5 N; turn 3: T2 R.
  EXPECT_EQ(turns, (std::map<std::string, int>{{"1", 3}, {"2", 3}, {"3", 1}}));
  for (const char* f : {"train.jsonl", "eval.jsonl", "dataset_info.json"})
    EXPECT_EQ(m["files"][f]["sha256"], sha256_hex(read_file(out.path() / f))) << f;
  // The page is self-contained: no script, no external reference.
  std::string html = read_file(out.path() / "composition.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  auto count = [&](const std::string& needle) {
    int n = 0;
    for (auto at = html.find(needle); at != std::string::npos; at = html.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("://"), count("http://www.w3.org/2000/svg")) << "only the SVG namespace names a URL";
  EXPECT_NE(html.find("Share per label"), std::string::npos);

  std::string shown = describe_dataset(out.path());
  EXPECT_NE(shown.find("records: 7"), std::string::npos) << shown;
  EXPECT_NE(shown.find("train.jsonl        sha256 ok"), std::string::npos) << shown;
  write_file_atomic(out.path() / "train.jsonl", "tampered\n");
  EXPECT_NE(describe_dataset(out.path()).find("CHANGED"), std::string::npos);
}

TEST(DataBuild, SameStoreRecipeAndSeedGiveIdenticalBytes) {
  Store s;
  TempDir out{"data_determinism"};
  auto j = recipe_json(s.run1);
  j["runs"] = "all";
  j["balance"] = {{"mode", "pre"}, {"cap_per_stratum", 2}};
  j["split"] = {{"eval_fraction", 0.3}};
  build_dataset(*s.store, recipe_of(j), out.path() / "a");
  build_dataset(*s.store, recipe_of(j), out.path() / "b");
  EXPECT_EQ(dataset_files(out.path() / "a"), dataset_files(out.path() / "b"));
  j["shuffle_seed"] = 8;
  build_dataset(*s.store, recipe_of(j), out.path() / "c");
  EXPECT_NE(read_file(out.path() / "a" / "manifest.json"), read_file(out.path() / "c" / "manifest.json"));

  // With a teacher: a fresh folder (new teacher calls) and a rebuild from the cache (none) agree.
  FakeTeacher teacher([](const std::string& user, int) { return deterministic_reasoning(user); });
  auto t = recipe_json(s.run1);
  t["teacher"] = teacher.config();
  t["reasoning"] = {{"min_chars", 100}, {"concurrency", 3}};
  BuildResult first = build_dataset(*s.store, recipe_of(t), out.path() / "t1");
  EXPECT_EQ(first.teacher_calls, 7);
  BuildResult again = build_dataset(*s.store, recipe_of(t), out.path() / "t1");
  EXPECT_EQ(again.teacher_calls, 0);
  EXPECT_EQ(again.cache_hits, 7);
  auto before = dataset_files(out.path() / "t1");
  build_dataset(*s.store, recipe_of(t), out.path() / "t2");
  EXPECT_EQ(teacher.calls(), 14);
  EXPECT_EQ(dataset_files(out.path() / "t2"), before);
  EXPECT_EQ(dataset_files(out.path() / "t1"), before);
}

// ---- the held-out guard

TEST(DataHeldOut, ARecipeCannotListAHeldOutDefinition) {
  Store s;
  auto j = recipe_json(s.run1);
  j["problem_set"] = {"gemm_a", "mha_held"};
  try {
    (void)recipe_of(j);
    FAIL() << "a held-out definition in the problem set was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("problem_set: 'mha_held' is held out"), std::string::npos) << e.what();
  }
  j["problem_set"] = "paper-hopper";
  j["held_out"] = {"mha_bwd_d128"};
  EXPECT_THROW((void)recipe_of(j), InputError);
}

TEST(DataHeldOut, HeldOutTrajectoriesAreNeverReadAndNeverRecorded) {
  Store s;
  // Make the held-out trajectory unreadable: any read of its turns now throws.
  {
    SqliteDb db((s.dir.path() / "runs.db").string());
    db.exec("UPDATE verdicts SET verdict = '{' WHERE trajectory_id = " + std::to_string(s.held_trajectory));
  }
  auto open = recipe_json(s.run1, "kernelgen");
  open["held_out"] = ordered_json::array();
  EXPECT_THROW(plan_dataset(*s.store, recipe_of(open)), RunStoreError) << "the corruption must be visible to a reader";

  TempDir out{"data_held_out"};
  for (const char* kind : {"fixit", "kernelgen"}) {
    BuildResult r = build_dataset(*s.store, recipe_of(recipe_json(s.run1, kind)), out.path() / kind);
    EXPECT_EQ(r.plan.sources.held_out_skipped, 1);
    std::string all = read_file(out.path() / kind / "train.jsonl") + read_file(out.path() / kind / "eval.jsonl");
    EXPECT_EQ(all.find("mha_held"), std::string::npos);
    EXPECT_EQ(all.find("h0t"), std::string::npos);
  }

  // The record builders refuse a held-out definition whatever hands them one.
  RepairPair p;
  p.key.definition = "mha_held";
  p.fixed_source = "int b;\n";
  EXPECT_THROW(fixit_record(p, std::nullopt, HeldOutDefinitions({"mha_held"})), HeldOutViolation);
  CorrectKernel k;
  k.key.definition = "mha_held";
  EXPECT_THROW(kernelgen_record(k, std::nullopt, HeldOutDefinitions({"mha_held"})), HeldOutViolation);
  EXPECT_NO_THROW(kernelgen_record(k, std::nullopt, HeldOutDefinitions({"other"})));
}

TEST(DataHeldOut, FakeBackendVerdictsAreRefusedUnlessAllowed) {
  Store s;
  test::ScriptedTurn fx = X("fake1"), fc = C(1.3, true, "fake2");
  fx.fake = fc.fake = true;
  std::string run = s.store->create_run({{"policy", "model"}}, "fake-model");
  test::add_trajectory(*s.store, run, {"gemm_a", "", "params", 0}, {fx, fc}, test::finished());
  auto j = recipe_json(run);
  EXPECT_THROW(plan_dataset(*s.store, recipe_of(j)), InputError);
  j["allow_fake_verdicts"] = true;
  EXPECT_EQ(plan_dataset(*s.store, recipe_of(j)).fixit.size(), 1u);
}

// ---- the teacher

TEST(DataTeacher, ExtractsAndRejectsReasonings) {
  EXPECT_EQ(extract_reasoning("pre <reasoning>\n  x y \n</reasoning> post"), "x y");
  EXPECT_FALSE(extract_reasoning("<reasoning> never closed"));
  EXPECT_FALSE(extract_reasoning("no tags at all"));

  ReasoningLimits limits;
  limits.min_chars = 10;
  limits.max_chars = 2000;
  std::string kernel;
  for (int i = 0; i < 30; ++i) kernel += "  float acc" + std::to_string(i) + " = fmaf(a, b, c);\n";
  EXPECT_EQ(reasoning_rejection("short", kernel, limits), "too short: 5 characters, the minimum is 10");
  EXPECT_EQ(reasoning_rejection(std::string(2001, 'x'), kernel, limits), "too long: 2001 characters, the maximum is 2000");
  EXPECT_EQ(reasoning_rejection("I think <think> about it", kernel, limits), "it contains the reserved tag <think>");
  EXPECT_EQ(reasoning_rejection("As the Expert's kernel does, ...", kernel, limits),
            "it refers to the kernel it was shown (\"expert's kernel\")");
  std::string snippet = "The accumulators:\n" + kernel.substr(0, kernel.find("acc5")) + "and so on.";
  EXPECT_EQ(reasoning_rejection(snippet, kernel, limits), std::nullopt) << "a five-line snippet is fine";
  std::string copy = "Here it is:\n" + kernel.substr(0, kernel.find("acc20")) + "done";
  EXPECT_EQ(longest_copied_run(copy, kernel), 20u);
  EXPECT_EQ(reasoning_rejection(copy, kernel, limits), "it copies the kernel to be written: 20 consecutive lines of it");
  // Scattered copying of most of the kernel is caught by the share rule.
  std::string scattered;
  for (int i = 0; i < 30; i += 2) scattered += "  float acc" + std::to_string(i) + " = fmaf(a, b, c);\nthen\n";
  for (int i = 1; i < 30; i += 2) scattered += "  float acc" + std::to_string(i) + " = fmaf(a, b, c);\nthen\n";
  EXPECT_NE(reasoning_rejection(scattered, kernel, limits)->find("of its 30 distinct lines"), std::string::npos);
}

TEST(DataTeacher, ResynthesisesARejectedAnswerAndCachesTheResult) {
  Store s;
  std::string good = "<reasoning>\nThe feedback says the kernel timed out: my mbarrier wait spins on the wrong phase, so the "
                     "producer never sees the slot freed. I flip the phase bit after each full ring and arrive with the "
                     "expected transaction bytes.\n</reasoning>";
  FakeTeacher teacher([&](const std::string&, int call) { return call == 1 ? "<reasoning>too short</reasoning>" : good; });
  auto j = recipe_json(s.run1);
  j["problem_set"] = {"mha_b"};
  j["labels"] = {"kernel_timeout"};
  j["teacher"] = teacher.config();
  j["reasoning"] = {{"min_chars", 60}, {"max_chars", 5000}, {"attempts", 3}};
  TempDir out{"data_teacher"};
  BuildResult r = build_dataset(*s.store, recipe_of(j), out.path());
  ASSERT_EQ(r.records, 1);
  EXPECT_EQ(r.teacher_calls, 2);
  auto users = teacher.users();
  ASSERT_EQ(users.size(), 2u);
  EXPECT_NE(users[0].find("Feedback for turn 1: m0t1"), std::string::npos) << users[0];
  EXPECT_NE(users[0].find("m0t2"), std::string::npos) << "the teacher sees the fixed kernel";
  EXPECT_EQ(users[0].find("previous answer was rejected"), std::string::npos);
  EXPECT_NE(users[1].find("# Your previous answer was rejected"), std::string::npos) << users[1];
  EXPECT_NE(users[1].find("too short: 9 characters, the minimum is 60"), std::string::npos) << users[1];
  auto record = ordered_json::parse(read_file(out.path() / "train.jsonl"));
  std::string last = record["messages"].back()["content"];
  EXPECT_EQ(last.rfind("<think>\nThe feedback says the kernel timed out", 0), 0u) << last;
  EXPECT_NE(last.find("</think>\n\n```cuda\n// turn 2 m0t2"), std::string::npos) << last;
  EXPECT_EQ(record["meta"]["reasoning_attempts"], 2);
  EXPECT_EQ(record["meta"]["teacher_model"], "teacher-x");
  EXPECT_EQ(r.manifest["reasoning"]["accepted"], 1);
  EXPECT_EQ(r.manifest["reasoning"]["teacher_calls"], 2);

  // A rebuild reads the cache: no call, the same bytes.
  auto before = dataset_files(out.path());
  BuildResult again = build_dataset(*s.store, recipe_of(j), out.path());
  EXPECT_EQ(again.teacher_calls, 0);
  EXPECT_EQ(teacher.calls(), 2);
  EXPECT_EQ(dataset_files(out.path()), before);
}

TEST(DataTeacher, AnItemRejectedEveryTimeIsDroppedAndStaysDroppedOnRebuild) {
  Store s;
  FakeTeacher teacher([](const std::string&, int) { return std::string("no tags here"); });
  auto j = recipe_json(s.run1, "kernelgen");
  j["problem_set"] = {"mha_b"};
  j["teacher"] = teacher.config();
  j["reasoning"] = {{"attempts", 2}, {"concurrency", 1}};
  TempDir out{"data_teacher_reject"};
  BuildResult r = build_dataset(*s.store, recipe_of(j), out.path());
  EXPECT_EQ(r.records, 0);
  EXPECT_EQ(r.reasoning_rejected, 2);
  EXPECT_EQ(teacher.calls(), 4);
  EXPECT_EQ(r.manifest["reasoning"]["rejected"], 2);
  EXPECT_EQ(read_file(out.path() / "train.jsonl"), "");
  build_dataset(*s.store, recipe_of(j), out.path());
  EXPECT_EQ(teacher.calls(), 4) << "a failure after every attempt is cached too";
  // More attempts allowed: the cached failure is no longer final.
  j["reasoning"]["attempts"] = 3;
  build_dataset(*s.store, recipe_of(j), out.path());
  EXPECT_EQ(teacher.calls(), 10);
}

// ---- recipes

TEST(DataRecipe, ValidationNamesTheField) {
  auto expect_error = [](ordered_json j, const std::string& needle) {
    try {
      (void)data_recipe_from_json(j, "r.json");
      ADD_FAILURE() << "accepted: " << j.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  ordered_json ok = {{"name", "x"}, {"kind", "fixit"}, {"runs", {"r1"}}, {"shuffle_seed", 1}};
  EXPECT_NO_THROW((void)data_recipe_from_json(ok));
  auto with = [&](const char* key, ordered_json v) {
    ordered_json j = ok;
    j[key] = std::move(v);
    return j;
  };
  expect_error(with("colour", "red"), "r.json: colour: unknown field");
  expect_error(with("kind", "sft"), "r.json: kind: unknown record kind 'sft'");
  expect_error(with("shuffle_seed", "seven"), "r.json: shuffle_seed");
  expect_error(with("runs", ordered_json::array()), "r.json: runs: name at least one");
  expect_error(with("runs", "everything"), "r.json: runs: expected a list of names or one of \"all\"");
  expect_error(with("problem_set", "hopper"), "r.json: problem_set: expected a list of names, \"all\", \"paper-hopper\" or a set of");
  expect_error(with("labels", {"correct"}), "r.json: labels[0]: 'correct' is no failure");
  expect_error(with("labels", {"compile"}), "r.json: labels[0]: unknown turn label 'compile'");
  expect_error(with("turns", {{"from", 3}, {"to", 2}}), "r.json: turns.to");
  expect_error(with("turns", {{"first", 1}}), "r.json: turns.first: unknown field");
  expect_error(with("balance", {{"mode", "pre"}}), "r.json: balance.cap_per_stratum: required with mode pre or post");
  expect_error(with("balance", {{"mode", "none"}, {"cap_per_stratum", 3}}), "r.json: balance.cap_per_stratum: only with mode pre or post");
  expect_error(with("balance", {{"mode", "sideways"}, {"cap_per_stratum", 3}}), "r.json: balance.mode: unknown balance mode");
  expect_error(with("split", {{"eval_fraction", 1.0}}), "r.json: split.eval_fraction: must be below 1");
  expect_error(with("reasoning", {{"min_chars", 10}}), "r.json: reasoning: only with a teacher");
  expect_error(with("teacher", {{"provider", "openai"}, {"base_url", "http://127.0.0.1:1/v1"}, {"model", "t"}, {"temperature", 3}}),
               "r.json: teacher: temperature");
  ordered_json no_seed = ok;
  no_seed.erase("shuffle_seed");
  expect_error(no_seed, "r.json: shuffle_seed: required");
  ordered_json kernelgen = with("kind", "kernelgen");
  kernelgen["labels"] = {"compilation_error"};
  expect_error(kernelgen, "r.json: labels: only for kind fixit");

  // Read back from its own JSON, a recipe is the same (what the manifest copies and hashes).
  ordered_json full = with("balance", {{"mode", "post"}, {"cap_per_stratum", 4}});
  full["teacher"] = {{"provider", "openai"}, {"base_url", "http://127.0.0.1:1/v1"}, {"model", "t"}, {"api_key_env", ""}};
  full["reasoning"] = {{"min_chars", 10}, {"max_chars", 20}};
  DataRecipe r = data_recipe_from_json(full);
  EXPECT_EQ(data_recipe_from_json(r.to_json()).to_json(), r.to_json());
  EXPECT_EQ(data_recipe_from_json(r.to_json()).sha256(), r.sha256());
}

TEST(DataRecipe, TheExampleRecipesAreValid) {
  for (const char* name : {"fixit_example.json", "kernelgen_example.json"}) {
    fs::path p = fs::path(PTXBENCH_SOURCE_DIR) / "configs" / "recipes" / name;
    EXPECT_NO_THROW((void)load_data_recipe(p)) << p;
  }
}

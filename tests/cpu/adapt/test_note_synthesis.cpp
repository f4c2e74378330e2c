// Writing repair notes (issue 19 item 5): the teacher's prompt and the strict reading of its answer,
// resynthesis of refused answers and the cache (a scripted in-process client), and `write_notes` on a
// scripted run store with a fake OpenAI-compatible teacher: provenance of every note, the held-out
// guard, idempotence, the dry run, a note retrieved afterwards by BM25 into a real feedback text,
// and `ptxbench data notes` end to end on the built binary.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "../report/test_report_support.h"
#include "adapt/data_recipe.h"
#include "adapt/note_synthesis.h"
#include "notes/notes_feedback.h"
#include "notes/notes_store.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/subprocess.h"
#include "helpers/fake_teacher.h"
#include "service/http_server.h"

using namespace ptxbench;

namespace {

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

// ---- the scripted store

test::ScriptedTurn turn(const std::string& status, const std::string& text) {
  test::ScriptedTurn t{status};
  t.text = text;
  return t;
}
test::ScriptedTurn X(const std::string& text) { return turn("COMPILE_ERROR", text); }
test::ScriptedTurn N(const std::string& text) { return turn("INCORRECT_NUMERICAL", text); }
test::ScriptedTurn T(const std::string& text) { return turn("TIMEOUT", text); }
test::ScriptedTurn E(const std::string& text) { return turn("EXTRACTION_ERROR", text); }
test::ScriptedTurn C(double speedup, const std::string& text) {
  test::ScriptedTurn t = turn("PASSED", text);
  t.speedup = speedup;
  t.target = true;
  return t;
}

/// The candidate source test::add_trajectory stores for turn n.
std::string source_of(int n, const std::string& text) {
  return "// turn " + std::to_string(n) + " " + text + "\nextern \"C\" int ptxb_run() { return 0; }\n";
}

/// One run (model-1):
///   gemm_a   #0: X(g0t1) N(g0t2) C(1.3, g0t3)  pairs X1->3, N2->3
///   mha_b    #0: T(m0t1) C(1.5, m0t2)           pair  T1->2 (kernel timeout)
///   mha_held #0: X(h0t1) C(1.4, h0t2)           held out
///   mha_b    #1: E(m1t1) C(1.2, m1t2)           pair  E1->2 only when extraction errors are asked for
/// op types: gemm_a gemm, mha_b mha_fwd_causal (family mha_fwd), mha_held mha_bwd.
struct Store {
  TempDir dir{"note_synthesis_test"};
  std::unique_ptr<RunStore> store;
  std::string run;
  int64_t gemm0 = 0, mha0 = 0;

  Store() {
    store = std::make_unique<RunStore>((dir.path() / "runs.db").string());
    run = store->create_run({{"policy", "model"}, {"num_turns", 3}}, "model-1");
    auto end = test::finished();
    gemm0 = test::add_trajectory(*store, run, {"gemm_a", "", "params", 0}, {X("g0t1"), N("g0t2"), C(1.3, "g0t3")}, end);
    mha0 = test::add_trajectory(*store, run, {"mha_b", "", "params", 0}, {T("m0t1"), C(1.5, "m0t2")}, test::stopped_early());
    test::add_trajectory(*store, run, {"mha_held", "", "params", 0}, {X("h0t1"), C(1.4, "h0t2")}, end);
    test::add_trajectory(*store, run, {"mha_b", "", "params", 1}, {E("m1t1"), C(1.2, "m1t2")}, end);
  }
  [[nodiscard]] std::string notes_path() const { return (dir.path() / "notes" / "notes.db").string(); }
};

std::string op_type_of(const std::string& definition) {
  if (definition == "gemm_a") return "gemm";
  if (definition == "mha_b") return "mha_fwd_causal";
  if (definition == "mha_held") return "mha_bwd";
  throw InputError("test", "unknown definition " + definition);
}

NotesOptions notes_options() {
  NotesOptions o;
  o.op_type = op_type_of;
  return o;
}

std::string note_answer(const std::string& what, const std::string& rule, const std::string& fix,
                        const std::string& example) {
  return ordered_json{{"what_was_wrong", what}, {"rule", rule}, {"fix", fix}, {"example", example}}.dump();
}

/// The teacher's note for the pair whose prompt shows `user`: each pair's note names a different
/// PTX instruction, so that retrieval can tell them apart.
std::string good_note(const std::string& user) {
  if (contains(user, "g0t1"))
    return note_answer("wgmma.mma_async was issued without a wgmma.fence.sync.aligned before it, so the accumulator "
                       "registers were read while still being written.",
                       "Issue wgmma.fence.sync.aligned before the first wgmma.mma_async of a group.",
                       "The fixed kernel fences, commits the group and waits on it before reading.",
                       "asm volatile(\"wgmma.fence.sync.aligned;\");");
  if (contains(user, "g0t2"))
    return "Here is the note:\n```json\n" +
           note_answer("mbarrier.try_wait.parity waited on the wrong phase bit after the ring wrapped, so stale tiles "
                       "were consumed.",
                       "Flip the phase bit of an mbarrier.try_wait.parity loop every time the stage index wraps.",
                       "The fixed kernel tracks the phase per stage and flips it on wrap-around.",
                       "```cuda\nphase ^= (stage == kStages - 1);\n```") +
           "\n```\n";
  if (contains(user, "m0t1"))
    return note_answer("cp.async.bulk.tensor was never matched by mbarrier.expect_tx bytes, so the consumer waited "
                       "forever.",
                       "Arm the barrier with the transaction bytes of every cp.async.bulk.tensor it tracks.",
                       "The fixed kernel calls mbarrier.arrive.expect_tx with the tile's bytes.",
                       "mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 16384;");
  return note_answer("generic mistake", "generic rule", "generic fix", "generic();");
}

// ---- teachers

/// An in-process teacher: answers each request with reply(request, call number from 1).
class ScriptedClient : public ModelClient {
 public:
  using Reply = std::function<ChatResponse(const ChatRequest&, int call)>;
  explicit ScriptedClient(Reply reply) : m_reply(std::move(reply)) {}
  ChatResponse complete(const ChatRequest& request) override {
    int call = ++m_calls;
    {
      std::lock_guard lock(m_mutex);
      m_users.push_back(request.messages.back().content);
    }
    return m_reply(request, call);
  }
  [[nodiscard]] int calls() const { return m_calls.load(); }
  [[nodiscard]] std::vector<std::string> users() const {
    std::lock_guard lock(m_mutex);
    return m_users;
  }

 private:
  Reply m_reply;
  std::atomic<int> m_calls{0};
  mutable std::mutex m_mutex;
  std::vector<std::string> m_users;
};

ChatResponse answer(const std::string& text, FinishReason finish = FinishReason::stop) {
  ChatResponse r;
  r.text = text;
  r.finish_reason = finish;
  return r;
}

using fakes::FakeTeacher;

ordered_json recipe_json(const std::string& run, const ordered_json& teacher) {
  return {{"name", "notes-test"}, {"kind", "fixit"},     {"runs", {run}},       {"problem_set", "all"},
          {"held_out", {"mha_held"}}, {"teacher", teacher}, {"shuffle_seed", 11}};
}

DataRecipe recipe_of(const ordered_json& j) { return data_recipe_from_json(j, "test recipe"); }

/// A pair as repair_pairs makes it, for the synthesizer's tests.
RepairPair sample_pair(const std::string& wrong, const std::string& fixed) {
  RepairPair p;
  p.run_id = "run-1";
  p.trajectory_id = 4;
  p.key = {"gemm_a", "", "params", 0};
  p.wrong_turn = 1;
  p.wrong_status = "COMPILE_ERROR";
  p.wrong_source = wrong;
  p.wrong_sha256 = sha256_hex(wrong);
  p.wrong_feedback = "Compile error: 'wgmma' undeclared";
  p.fixed_turn = 2;
  p.fixed_source = fixed;
  p.fixed_sha256 = sha256_hex(fixed);
  p.fixed_speedup = 1.4;
  return p;
}

std::string numbered_lines(const std::string& prefix, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += prefix + " statement number " + std::to_string(i) + ";\n";
  return s;
}

}  // namespace

// ------------------------------------------------------------------------------- prompt and reading

TEST(NotePrompt, ShowsThePairItsContextAndTheLimits) {
  RepairPair p = sample_pair("wrong_kernel();\n", "fixed_kernel();\n");
  TeacherPrompt first = note_prompt(p, "gemm");
  EXPECT_EQ(first.user.rfind("## Context\n\nDefinition gemm_a (op family gemm). The rejected kernel's verdict: COMPILE_ERROR.", 0), 0u)
      << first.user;
  EXPECT_TRUE(contains(first.user, "```cuda\nwrong_kernel();\n```")) << first.user;
  EXPECT_TRUE(contains(first.user, "```text\nCompile error: 'wgmma' undeclared\n```")) << first.user;
  EXPECT_TRUE(contains(first.user, "## Accepted kernel (the fix)\n\n```cuda\nfixed_kernel();\n```")) << first.user;
  EXPECT_TRUE(contains(first.system, "Answer with one JSON object and nothing else")) << first.system;
  EXPECT_TRUE(contains(first.system, "The example is at most 30 lines. No field may hold more than 8 consecutive lines"))
      << first.system;
  EXPECT_FALSE(contains(first.user, "previous answer was rejected"));

  TeacherPrompt again = note_prompt(p, "gemm", {"first reason", "teacher answer: rule: missing required field"});
  EXPECT_EQ(again.system, first.system);
  EXPECT_EQ(again.user.rfind(first.user, 0), 0u) << "the retry extends the first prompt";
  EXPECT_TRUE(contains(again.user, "## Your previous answer was rejected\n\nReason: teacher answer: rule: missing required field.\n"))
      << again.user;
  EXPECT_TRUE(contains(again.user, "what_was_wrong (at most 600 characters), rule (at most 400), fix (at most 800) and "
                                   "example (at most 1500 characters)"))
      << again.user;
  EXPECT_FALSE(contains(again.user, "first reason"));

  // The key is the teacher and the whole first prompt.
  EXPECT_EQ(note_request_key(first, "t"), note_request_key(note_prompt(p, "gemm"), "t"));
  EXPECT_NE(note_request_key(first, "t"), note_request_key(first, "u"));
  EXPECT_NE(note_request_key(first, "t"), note_request_key(note_prompt(p, "mha_fwd"), "t"));
  EXPECT_EQ(note_request_key(first, "t").size(), 64u);
}

TEST(NoteAnswer, ReadsStrictlyAndRefusesLongExamplesAndCopies) {
  std::string fixed = numbered_lines("fixed", 20), wrong = numbered_lines("wrong", 20);
  RepairPair p = sample_pair(wrong, fixed);
  NoteText t = read_note_answer(note_answer(" w ", "r", "f", "```cuda\nfixed statement number 3;\n```"), p);
  EXPECT_EQ(t.what_was_wrong, "w");
  EXPECT_EQ(t.example, "fixed statement number 3;");

  auto refusal = [&](const std::string& answer_text) {
    try {
      (void)read_note_answer(answer_text, p);
    } catch (const InputError& e) {
      return JsonChecker::message_of(e);
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal("The kernel used the wrong parity.").rfind("teacher answer: ", 0), 0u);
  EXPECT_TRUE(contains(refusal(R"({"what_was_wrong": "w", "fix": "f", "example": "e"})"), "rule: missing required field"));
  EXPECT_TRUE(contains(refusal(note_answer("w", "r", "f", "e").insert(1, R"("extra": "x", )")), "extra: unknown field"));
  EXPECT_TRUE(contains(refusal(note_answer("w", std::string(kRuleMaxChars + 1, 'r'), "f", "e")), "rule: 401 characters"));
  EXPECT_TRUE(contains(refusal(note_answer("w", "r", "", "e")), "fix: empty"));

  std::string long_example;
  for (int i = 0; i < 31; ++i) long_example += "x" + std::to_string(i) + "\n";
  EXPECT_EQ(refusal(note_answer("w", "r", "f", long_example)), "teacher answer: example: 31 lines, over the limit of 30");
  std::string thirty = long_example.substr(0, long_example.rfind("x30"));
  EXPECT_EQ(refusal(note_answer("w", "r", "f", thirty)), "accepted");

  // Eight consecutive lines of a kernel may be quoted, nine may not (either kernel, any field).
  EXPECT_EQ(refusal(note_answer("w", "r", "f", numbered_lines("fixed", 8))), "accepted");
  EXPECT_EQ(refusal(note_answer("w", "r", "f", numbered_lines("fixed", 9))),
            "teacher answer: it copies 9 consecutive lines of the fixed kernel (at most 8)");
  EXPECT_EQ(refusal(note_answer(numbered_lines("wrong", 12), "r", "f", "e")),
            "teacher answer: it copies 12 consecutive lines of the rejected kernel (at most 8)");

  // The instruction part is read by the same copy check: one line per list item counts too.
  ordered_json with_part = ordered_json::parse(note_answer("w", "r", "f", "e"));
  with_part["instruction_note"] = {{"instruction", "wgmma.mma_async"}};
  for (int i = 1; i <= 9; ++i)
    with_part["instruction_note"][i <= 5 ? "required_sequence" : "do_not_do"].push_back("fixed statement number " +
                                                                                        std::to_string(i) + ";");
  EXPECT_EQ(refusal(with_part.dump()), "teacher answer: it copies 9 consecutive lines of the fixed kernel (at most 8)");
  with_part["instruction_note"]["do_not_do"].erase(3);
  EXPECT_EQ(refusal(with_part.dump()), "accepted");
}

// ------------------------------------------------------------------------------- the synthesizer

TEST(NoteSynthesizerTest, ResynthesisesRefusedAnswersAndCachesEveryOutcome) {
  TempDir dir{"note_synth"};
  RepairPair p = sample_pair("wrong();\n", "fixed();\n");
  const std::string good = note_answer("w", "r", "f", "e();");
  // Cut at max_tokens, then not JSON, then good.
  ScriptedClient client([&](const ChatRequest&, int call) {
    if (call == 1) return answer(good, FinishReason::length);
    if (call == 2) return answer("I think the barrier is wrong.");
    return answer(good);
  });
  NoteSynthesizer synth(&client, "teacher-x", 3, dir.path() / "cache");
  EXPECT_FALSE(synth.cached(p, "gemm"));
  NoteOutcome o = synth.synthesize(p, "gemm");
  ASSERT_TRUE(o.accepted);
  EXPECT_EQ(o.attempts, 3);
  EXPECT_FALSE(o.from_cache);
  EXPECT_EQ(o.text.rule, "r");
  ASSERT_EQ(o.rejections.size(), 2u);
  EXPECT_EQ(o.rejections[0], "the answer was cut at the max_tokens limit");
  EXPECT_EQ(o.rejections[1].rfind("teacher answer: ", 0), 0u) << o.rejections[1];
  auto users = client.users();
  ASSERT_EQ(users.size(), 3u);
  EXPECT_FALSE(contains(users[0], "previous answer was rejected"));
  EXPECT_TRUE(contains(users[1], "Reason: the answer was cut at the max_tokens limit.")) << users[1];
  EXPECT_TRUE(contains(users[2], "Reason: " + o.rejections[1] + ".")) << users[2];

  // The entry: named by the key of (teacher, first prompt), with the answer, the note and the history.
  fs::path entry = dir.path() / "cache" / (note_request_key(note_prompt(p, "gemm"), "teacher-x") + ".json");
  ASSERT_TRUE(fs::exists(entry));
  auto j = ordered_json::parse(read_file(entry));
  EXPECT_EQ(j["schema"], "ptxbench.note_answer");
  EXPECT_EQ(j["teacher_model"], "teacher-x");
  EXPECT_EQ(j["accepted"], true);
  EXPECT_EQ(j["attempts"], 3);
  EXPECT_EQ(j["answer"], good);
  EXPECT_EQ(j["note"]["fix"], "f");

  // From the cache: no call, the same note.
  NoteOutcome again = synth.synthesize(p, "gemm");
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.text.fix, "f");
  EXPECT_EQ(again.attempts, 3);
  EXPECT_EQ(client.calls(), 3);
  EXPECT_EQ(synth.calls(), 3);
}

TEST(NoteSynthesizerTest, APairRefusedEveryTimeStaysRefusedUntilMoreAttemptsAreAllowed) {
  TempDir dir{"note_synth_refused"};
  RepairPair p = sample_pair("wrong();\n", "fixed();\n");
  ScriptedClient client([](const ChatRequest&, int) { return answer("no JSON here"); });
  NoteSynthesizer two(&client, "teacher-x", 2, dir.path());
  NoteOutcome o = two.synthesize(p, "gemm");
  EXPECT_FALSE(o.accepted);
  EXPECT_EQ(o.attempts, 2);
  EXPECT_EQ(o.rejections.size(), 2u);
  EXPECT_EQ(client.calls(), 2);
  EXPECT_TRUE(two.synthesize(p, "gemm").from_cache);
  EXPECT_EQ(client.calls(), 2) << "a refusal after every attempt is final for that many attempts";
  NoteSynthesizer three(&client, "teacher-x", 3, dir.path());
  EXPECT_FALSE(three.cached(p, "gemm"));
  EXPECT_FALSE(three.synthesize(p, "gemm").accepted);
  EXPECT_EQ(client.calls(), 5);
  // Another teacher is another request.
  NoteSynthesizer other(nullptr, "teacher-y", 3, dir.path());
  EXPECT_FALSE(other.cached(p, "gemm"));
  EXPECT_THROW(other.synthesize(p, "gemm"), Error);
}

// ------------------------------------------------------------------------------- write_notes

TEST(WriteNotes, ANoteForEachPairWithItsProvenance) {
  Store s;
  FakeTeacher teacher(good_note);
  NotesResult r = write_notes(*s.store, recipe_of(recipe_json(s.run, teacher.config())), s.notes_path(), notes_options());
  EXPECT_EQ(r.counts.pairs, 3);
  EXPECT_EQ(r.counts.requested, 3);
  EXPECT_EQ(r.counts.written, 3);
  EXPECT_EQ(r.counts.rejected, 0);
  EXPECT_EQ(r.counts.cache_hits, 0);
  EXPECT_EQ(r.counts.teacher_calls, 3);
  EXPECT_EQ(r.counts.already_noted, 0);
  EXPECT_EQ(r.plan.sources.held_out_skipped, 1);
  EXPECT_EQ(r.added, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(r.store_notes, 3);
  EXPECT_EQ(teacher.calls(), 3);
  EXPECT_EQ(r.cache_dir, fs::path(s.notes_path()).parent_path() / "note_cache");
  EXPECT_TRUE(fs::exists(r.cache_dir));

  NotesStore notes(s.notes_path(), NotesStore::Open::existing);
  ASSERT_EQ(notes.count(), 3);
  // Ids follow the pairs' canonical order: gemm_a X1->3, gemm_a N2->3, mha_b T1->2.
  RepairNote n1 = *notes.find(1);
  EXPECT_EQ(n1.op_family, "gemm");
  EXPECT_EQ(n1.definition, "gemm_a");
  EXPECT_EQ(n1.source.run_id, s.run);
  EXPECT_EQ(n1.source.trajectory_id, s.gemm0);
  EXPECT_EQ(n1.source.wrong_turn, 1);
  EXPECT_EQ(n1.source.fixed_turn, 3);
  EXPECT_EQ(n1.source.wrong_sha256, sha256_hex(source_of(1, "g0t1")));
  EXPECT_EQ(n1.source.fixed_sha256, sha256_hex(source_of(3, "g0t3")));
  EXPECT_EQ(n1.wrong_status, "COMPILE_ERROR");
  EXPECT_EQ(n1.fixed_speedup, 1.3);
  EXPECT_EQ(n1.teacher_model, "teacher-x");
  EXPECT_GT(n1.created_at, 0.0);
  EXPECT_EQ(n1.text.rule, "Issue wgmma.fence.sync.aligned before the first wgmma.mma_async of a group.");
  EXPECT_EQ(notes.kernel_source(n1.source.fixed_sha256), source_of(3, "g0t3"));
  EXPECT_EQ(notes.kernel_source(n1.source.wrong_sha256), source_of(1, "g0t1"));

  RepairNote n2 = *notes.find(2);
  EXPECT_EQ(n2.source.wrong_turn, 2);
  EXPECT_EQ(n2.wrong_status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(n2.text.example, "phase ^= (stage == kStages - 1);") << "fenced answer and fenced example unwrapped";

  RepairNote n3 = *notes.find(3);
  EXPECT_EQ(n3.op_family, "mha_fwd") << "mha_fwd_causal files under its family";
  EXPECT_EQ(n3.definition, "mha_b");
  EXPECT_EQ(n3.source.trajectory_id, s.mha0);
  EXPECT_EQ(n3.wrong_status, "TIMEOUT");
  EXPECT_EQ(n3.fixed_speedup, 1.5);
  EXPECT_EQ(notes.kernel_source(n3.source.fixed_sha256), source_of(2, "m0t2"));

  // What the teacher was shown: each pair's wrong kernel, feedback and fix.
  bool saw_timeout = false;
  for (const auto& u : teacher.users())
    if (contains(u, "m0t1")) {
      saw_timeout = true;
      EXPECT_TRUE(contains(u, "Definition mha_b (op family mha_fwd). The rejected kernel's verdict: TIMEOUT.")) << u;
      EXPECT_TRUE(contains(u, "Feedback for turn 1: m0t1")) << u;
      EXPECT_TRUE(contains(u, source_of(2, "m0t2"))) << u;
    }
  EXPECT_TRUE(saw_timeout);
}

TEST(WriteNotes, AMalformedAnswerIsResynthesised) {
  Store s;
  // The first answer about N2->3 is not JSON; its retry (which names the refusal) is good.
  FakeTeacher teacher([](const std::string& user) {
    if (contains(user, "g0t2") && !contains(user, "previous answer was rejected")) return std::string("Sorry, no JSON today.");
    return good_note(user);
  });
  NotesResult r = write_notes(*s.store, recipe_of(recipe_json(s.run, teacher.config())), s.notes_path(), notes_options());
  EXPECT_EQ(r.counts.written, 3);
  EXPECT_EQ(r.counts.rejected, 0);
  EXPECT_EQ(r.counts.teacher_calls, 4);
  EXPECT_EQ(teacher.calls(), 4);
  int retries = 0;
  for (const auto& u : teacher.users())
    if (contains(u, "## Your previous answer was rejected\n\nReason: teacher answer: ")) {
      ++retries;
      EXPECT_TRUE(contains(u, "g0t2")) << u;
    }
  EXPECT_EQ(retries, 1);
  NotesStore notes(s.notes_path(), NotesStore::Open::existing);
  EXPECT_EQ(notes.find(2)->text.rule,
            "Flip the phase bit of an mbarrier.try_wait.parity loop every time the stage index wraps.");
}

TEST(WriteNotes, AnswersRefusedEveryTimeGiveNoNote) {
  Store s;
  FakeTeacher teacher([](const std::string& user) { return contains(user, "m0t1") ? std::string("{}") : good_note(user); });
  auto j = recipe_json(s.run, teacher.config());
  j["reasoning"] = {{"attempts", 2}, {"concurrency", 1}};
  NotesResult r = write_notes(*s.store, recipe_of(j), s.notes_path(), notes_options());
  EXPECT_EQ(r.counts.written, 2);
  EXPECT_EQ(r.counts.rejected, 1);
  EXPECT_EQ(r.counts.teacher_calls, 4);
  // Again: the noted pairs are skipped, the refused one comes from the cache, nobody is called.
  NotesResult again = write_notes(*s.store, recipe_of(j), s.notes_path(), notes_options());
  EXPECT_EQ(again.counts.already_noted, 2);
  EXPECT_EQ(again.counts.requested, 1);
  EXPECT_EQ(again.counts.cache_hits, 1);
  EXPECT_EQ(again.counts.rejected, 1);
  EXPECT_EQ(again.counts.teacher_calls, 0);
  EXPECT_EQ(teacher.calls(), 4);
}

TEST(WriteNotes, HeldOutDefinitionsNeverGetANote) {
  Store s;
  FakeTeacher teacher(good_note);
  NotesResult r = write_notes(*s.store, recipe_of(recipe_json(s.run, teacher.config())), s.notes_path(), notes_options());
  EXPECT_EQ(r.plan.sources.held_out_skipped, 1);
  for (const auto& u : teacher.users()) EXPECT_FALSE(contains(u, "h0t")) << "the teacher saw a held-out kernel";
  NotesStore notes(s.notes_path(), NotesStore::Open::existing);
  for (int64_t id = 1; id <= notes.count(); ++id) EXPECT_NE(notes.find(id)->definition, "mha_held");

  // The same recipe without the guard would have noted it: the guard, not the data, kept it out.
  auto open = recipe_json(s.run, teacher.config());
  open["held_out"] = ordered_json::array();
  NotesOptions dry_run = notes_options();
  dry_run.dry_run = true;
  NotesResult dry = write_notes(*s.store, recipe_of(open), s.notes_path(), dry_run);
  EXPECT_EQ(dry.counts.pairs, 4);
  EXPECT_EQ(dry.counts.already_noted, 3);
  EXPECT_EQ(dry.counts.requested, 1);

  // Whatever hands add_pair_notes a held-out pair, it refuses before anyone is asked or anything
  // is written.
  DatasetPlan plan = plan_dataset(*s.store, recipe_of(open));
  ASSERT_EQ(plan.fixit.size(), 4u);
  ScriptedClient client([](const ChatRequest& r, int) { return answer(good_note(r.messages.back().content)); });
  TempDir other{"note_held_out"};
  NotesStore fresh((other.path() / "notes.db").string());
  NoteSynthesizer synth(&client, "teacher-x", 3, other.path() / "cache");
  EXPECT_THROW(add_pair_notes(plan.fixit, HeldOutDefinitions({"mha_held"}), op_type_of, &fresh, synth, {}), HeldOutViolation);
  EXPECT_EQ(client.calls(), 0);
  EXPECT_EQ(fresh.count(), 0);
}

TEST(WriteNotes, RunningTwiceAddsNoDuplicate) {
  Store s;
  FakeTeacher teacher(good_note);
  DataRecipe recipe = recipe_of(recipe_json(s.run, teacher.config()));
  NotesResult first = write_notes(*s.store, recipe, s.notes_path(), notes_options());
  ASSERT_EQ(first.counts.written, 3);
  NotesResult second = write_notes(*s.store, recipe, s.notes_path(), notes_options());
  EXPECT_EQ(second.counts.pairs, 3);
  EXPECT_EQ(second.counts.already_noted, 3);
  EXPECT_EQ(second.counts.requested, 0);
  EXPECT_EQ(second.counts.written, 0);
  EXPECT_EQ(second.counts.teacher_calls, 0);
  EXPECT_TRUE(second.added.empty());
  EXPECT_EQ(second.store_notes, 3);
  EXPECT_EQ(teacher.calls(), 3);

  // A new store with the same cache: every note again, from the cache, with the same text.
  NotesOptions o = notes_options();
  o.cache_dir = first.cache_dir;
  std::string other = (s.dir.path() / "other.db").string();
  NotesResult rebuilt = write_notes(*s.store, recipe, other, o);
  EXPECT_EQ(rebuilt.counts.written, 3);
  EXPECT_EQ(rebuilt.counts.cache_hits, 3);
  EXPECT_EQ(rebuilt.counts.teacher_calls, 0);
  EXPECT_EQ(teacher.calls(), 3);
  NotesStore a(s.notes_path(), NotesStore::Open::existing), b(other, NotesStore::Open::existing);
  for (int64_t id = 1; id <= 3; ++id) {
    EXPECT_EQ(a.find(id)->text.what_was_wrong, b.find(id)->text.what_was_wrong);
    EXPECT_EQ(a.find(id)->source.wrong_sha256, b.find(id)->source.wrong_sha256);
  }
}

TEST(WriteNotes, AWrittenNoteIsRetrievedByBm25IntoTheFeedback) {
  Store s;
  FakeTeacher teacher(good_note);
  write_notes(*s.store, recipe_of(recipe_json(s.run, teacher.config())), s.notes_path(), notes_options());
  NotesStore notes(s.notes_path(), NotesStore::Open::existing);
  const std::string failing =
      "__global__ void k(uint64_t* bar) {\n"
      "  asm volatile(\"mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\" :: \"r\"(bar), \"r\"(phase));\n"
      "}\nextern \"C\" int ptxb_run() { return 0; }\n";
  auto found = notes.retrieve(failing, "gemm", 3);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].note.id, 2) << "the mbarrier.try_wait.parity note ranks first";
  EXPECT_GT(found[0].score, 0.0);
  for (const auto& f : found) EXPECT_EQ(f.note.op_family, "gemm") << "only the failing kernel's op family";
  if (found.size() > 1) {
    EXPECT_GT(found[0].score, found[1].score);
  }
  // The mha_fwd note is found from an mha kernel of either variant, never from a gemm one.
  auto mha = notes.retrieve("asm(\"cp.async.bulk.tensor.2d.shared::cluster.global [%0];\");", "mha_fwd_causal", 3);
  ASSERT_EQ(mha.size(), 1u);
  EXPECT_EQ(mha[0].note.id, 3);

  std::string feedback = feedback_with_notes("Verdict: INCORRECT_NUMERICAL\n", notes, failing, "gemm",
                                             NotesMode::notes_and_kernel, 1);
  EXPECT_TRUE(contains(feedback, "## Repair notes")) << feedback;
  EXPECT_TRUE(contains(feedback, "### Note 1 (from a kernel that got INCORRECT_NUMERICAL)")) << feedback;
  EXPECT_TRUE(contains(feedback, "Rule: Flip the phase bit of an mbarrier.try_wait.parity loop")) << feedback;
  EXPECT_TRUE(contains(feedback, "## Fastest fixed kernel")) << feedback;
  EXPECT_TRUE(contains(feedback, source_of(3, "g0t3"))) << "the fix the note came from";
  std::string notes_only = feedback_with_notes("Verdict: INCORRECT_NUMERICAL\n", notes, failing, "gemm", NotesMode::notes, 1);
  EXPECT_FALSE(contains(notes_only, "## Fastest fixed kernel"));
}

TEST(WriteNotes, DryRunCountsWithoutAskingOrWriting) {
  Store s;
  FakeTeacher teacher(good_note);
  auto j = recipe_json(s.run, teacher.config());
  j["labels"] = {"compilation_error", "numerical_error", "kernel_timeout", "extraction_error"};
  NotesOptions o = notes_options();
  o.dry_run = true;
  NotesResult dry = write_notes(*s.store, recipe_of(j), s.notes_path(), o);
  EXPECT_EQ(dry.counts.pairs, 4);
  EXPECT_EQ(dry.counts.no_wrong_kernel, 1) << "the extraction error's pair has no kernel to file a note under";
  EXPECT_EQ(dry.counts.requested, 3);
  EXPECT_EQ(dry.counts.cache_hits, 0);
  EXPECT_EQ(dry.counts.written, 0);
  EXPECT_EQ(teacher.calls(), 0);
  EXPECT_FALSE(fs::exists(fs::path(s.notes_path()).parent_path())) << "nothing created";

  NotesResult real = write_notes(*s.store, recipe_of(j), s.notes_path(), notes_options());
  EXPECT_EQ(real.counts.no_wrong_kernel, 1);
  EXPECT_EQ(real.counts.written, 3);
  NotesResult after = write_notes(*s.store, recipe_of(j), s.notes_path(), o);
  EXPECT_EQ(after.counts.already_noted, 3);
  EXPECT_EQ(after.counts.requested, 0);
  EXPECT_EQ(after.store_notes, 3);
  std::string text = describe_notes(recipe_of(j), after, true);
  EXPECT_TRUE(contains(text, "notes: 4 pairs: 3 already in the store, 1 without a wrong kernel (extraction errors), 0 to ask"))
      << text;
}

TEST(WriteNotes, RecipesWithoutATeacherOrPairsAndUnknownDefinitionsAreRefused) {
  Store s;
  FakeTeacher teacher(good_note);
  auto expect_input_error = [&](const ordered_json& j, const NotesOptions& o, const std::string& needle) {
    try {
      (void)write_notes(*s.store, recipe_of(j), s.notes_path(), o);
      ADD_FAILURE() << "accepted: " << j.dump();
    } catch (const InputError& e) {
      EXPECT_TRUE(contains(e.what(), needle)) << e.what();
    }
  };
  auto no_teacher = recipe_json(s.run, nullptr);
  expect_input_error(no_teacher, notes_options(), "recipe 'notes-test' names no teacher");
  auto kernelgen = recipe_json(s.run, teacher.config());
  kernelgen["kind"] = "kernelgen";
  expect_input_error(kernelgen, notes_options(), "is of kind kernelgen");
  NotesOptions unknown = notes_options();
  unknown.op_type = [](const std::string& d) -> std::string {
    if (d == "mha_b") throw InputError("test", "no op_type for mha_b");
    return op_type_of(d);
  };
  expect_input_error(recipe_json(s.run, teacher.config()), unknown, "no op_type for mha_b");
  EXPECT_EQ(teacher.calls(), 0);
  EXPECT_FALSE(fs::exists(s.notes_path())) << "refused before the store is created";
}

TEST(WriteNotes, ATeacherThatFailsForGoodKeepsWhatWasAnsweredBefore) {
  Store s;
  DataRecipe recipe = recipe_of(recipe_json(s.run, {{"provider", "openai"}, {"base_url", "http://127.0.0.1:1/v1"},
                                                    {"model", "teacher-x"}, {"api_key_env", ""}}));
  recipe.reasoning.concurrency = 1;  // pairs in order: the second one fails
  ScriptedClient failing([](const ChatRequest& r, int) {
    const std::string& user = r.messages.back().content;
    if (contains(user, "g0t2"))
      throw ModelApiError(Provider::openai, ModelApiError::Kind::connection, 0, true, 9, "", "connection refused");
    return answer(good_note(user));
  });
  NotesOptions o = notes_options();
  o.teacher = &failing;
  EXPECT_THROW(write_notes(*s.store, recipe, s.notes_path(), o), ModelApiError);
  EXPECT_EQ(failing.calls(), 2) << "the third pair was not started after the failure";
  {
    NotesStore notes(s.notes_path(), NotesStore::Open::existing);
    ASSERT_EQ(notes.count(), 1);
    EXPECT_EQ(notes.find(1)->source.wrong_turn, 1);
  }
  // The next run continues: the noted pair is skipped, the other two are asked.
  ScriptedClient working([](const ChatRequest& r, int) { return answer(good_note(r.messages.back().content)); });
  o.teacher = &working;
  NotesResult r = write_notes(*s.store, recipe, s.notes_path(), o);
  EXPECT_EQ(r.counts.already_noted, 1);
  EXPECT_EQ(r.counts.written, 2);
  EXPECT_EQ(working.calls(), 2);
  EXPECT_EQ(r.store_notes, 3);
}

TEST(WriteNotes, TheExampleRecipeCanGiveNotes) {
  fs::path p = fs::path(PTXBENCH_SOURCE_DIR) / "configs" / "recipes" / "notes_example.json";
  DataRecipe recipe = load_data_recipe(p);
  EXPECT_NO_THROW(check_notes_recipe(recipe));
  EXPECT_TRUE(recipe.held_out_set().contains("mha_bwd_d128_causal"));
}

// ------------------------------------------------------------------------------- the command

namespace {

ProcessResult run_cli(const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {(executable_dir() / "ptxbench").string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  return run_process(spec, 120);
}

std::string describe(const ProcessResult& r) {
  return r.status.describe() + "\nstdout:\n" + r.out.text + "\nstderr:\n" + r.err.text;
}

}  // namespace

TEST(DataNotesCli, WritesNotesOnceAndRefusesBadRecipes) {
  ASSERT_TRUE(fs::exists(executable_dir() / "ptxbench")) << "build the ptxbench target";
  TempDir dir{"data_notes_cli"};
  std::string runs = (dir.path() / "runs.db").string(), run;
  {
    RunStore s(runs);
    run = s.create_run({{"policy", "model"}, {"num_turns", 2}}, "model-1");
    test::add_trajectory(s, run, {"gemm_n7168_k5120", "", "params", 0}, {X("gx1"), C(1.3, "gc2")}, test::finished());
    test::add_trajectory(s, run, {"mha_with_lse_d128_causal", "", "params", 0}, {N("mn1"), C(1.1, "mc2")}, test::finished());
    test::add_trajectory(s, run, {"mha_bwd_d128", "", "params", 0}, {X("bx1"), C(1.2, "bc2")}, test::finished());
  }
  FakeTeacher teacher([](const std::string& user) {
    return note_answer("the mistake of " + sha256_hex(user).substr(0, 8), "the rule", "the fix", "fix();");
  });
  auto recipe = [&](ordered_json j, const std::string& name) {
    fs::path p = dir.path() / name;
    write_file_atomic(p, j.dump(2));
    return p.string();
  };
  ordered_json j = {{"name", "cli-notes"}, {"kind", "fixit"},         {"runs", {run}},
                    {"held_out", {"mha_bwd_d128"}}, {"teacher", teacher.config()}, {"shuffle_seed", 1}};
  std::string good = recipe(j, "notes.json");
  std::string notes = (dir.path() / "notes" / "notes.db").string();

  ProcessResult dry = run_cli({"data", "notes", good, "--store", runs, "--notes", notes, "--dry-run"});
  ASSERT_EQ(dry.status.exit_code, 0) << describe(dry);
  EXPECT_TRUE(contains(dry.out.text, "trajectories: read 2, held out (never read) 1")) << dry.out.text;
  EXPECT_TRUE(contains(dry.out.text, "notes: 2 pairs: 0 already in the store, 0 without a wrong kernel (extraction errors), 2 to ask (0 answered"))
      << dry.out.text;
  EXPECT_TRUE(contains(dry.out.text, "dry run: no teacher called, nothing written")) << dry.out.text;
  EXPECT_TRUE(contains(dry.out.text, "(a note per pair, at most 3 calls each)\n")) << dry.out.text;
  EXPECT_FALSE(contains(dry.out.text, "items to reason about")) << dry.out.text;
  EXPECT_FALSE(fs::exists(notes));
  EXPECT_EQ(teacher.calls(), 0);

  ProcessResult written = run_cli({"data", "notes", good, "--store", runs, "--notes", notes, "--json"});
  ASSERT_EQ(written.status.exit_code, 0) << describe(written);
  auto out = ordered_json::parse(written.out.text);
  EXPECT_EQ(out["notes"]["pairs"], 2);
  EXPECT_EQ(out["notes"]["written"], 2);
  EXPECT_EQ(out["notes"]["teacher_calls"], 2);
  EXPECT_EQ(out["notes"]["rejected"], 0);
  EXPECT_EQ(out["selection"]["sources"]["held_out_skipped"], 1);
  EXPECT_EQ(out["store_notes"], 2);
  EXPECT_EQ(out["dry_run"], false);
  EXPECT_EQ(teacher.calls(), 2);
  {
    NotesStore store(notes, NotesStore::Open::existing);
    ASSERT_EQ(store.count(), 2);
    EXPECT_EQ(store.find(1)->definition, "gemm_n7168_k5120");
    EXPECT_EQ(store.find(1)->op_family, "gemm");
    EXPECT_EQ(store.find(2)->definition, "mha_with_lse_d128_causal");
    EXPECT_EQ(store.find(2)->op_family, "mha_fwd") << "the catalog's op_type mha_fwd_causal, as its family";
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "notes" / "note_cache"), fs::directory_iterator{}), 2);

  ProcessResult again = run_cli({"data", "notes", good, "--store", runs, "--notes", notes});
  ASSERT_EQ(again.status.exit_code, 0) << describe(again);
  EXPECT_TRUE(contains(again.out.text, "notes: 2 pairs: 2 already in the store, 0 without a wrong kernel (extraction errors), "
                                       "0 asked -> 0 notes written, 0 rejected"))
      << again.out.text;
  EXPECT_TRUE(contains(again.out.text, "teacher calls 0, answers from the cache 0")) << again.out.text;
  EXPECT_EQ(teacher.calls(), 2);
  EXPECT_EQ(NotesStore(notes, NotesStore::Open::existing).count(), 2);

  ordered_json without = j;
  without.erase("teacher");
  ProcessResult no_teacher = run_cli({"data", "notes", recipe(without, "no_teacher.json"), "--store", runs, "--notes", notes});
  EXPECT_EQ(no_teacher.status.exit_code, 2) << describe(no_teacher);
  EXPECT_TRUE(contains(no_teacher.err.text, "names no teacher")) << no_teacher.err.text;

  ordered_json keyed = j;
  keyed["teacher"]["api_key_env"] = "PTXBENCH_NOTES_TEST_UNSET_KEY";
  std::string fresh = (dir.path() / "fresh" / "notes.db").string();
  ProcessResult no_key = run_cli({"data", "notes", recipe(keyed, "keyed.json"), "--store", runs, "--notes", fresh});
  EXPECT_EQ(no_key.status.exit_code, 3) << describe(no_key);
  EXPECT_TRUE(contains(no_key.err.text, "PTXBENCH_NOTES_TEST_UNSET_KEY")) << no_key.err.text;
  EXPECT_FALSE(fs::exists(fresh)) << "nothing created before the teacher can be reached";

  ProcessResult no_notes = run_cli({"data", "notes", good, "--store", runs});
  EXPECT_EQ(no_notes.status.exit_code, 2) << describe(no_notes);
}

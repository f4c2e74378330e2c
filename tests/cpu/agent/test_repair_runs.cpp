// The two repair conditions of issue 19 end to end on the CPU, with a scripted OpenAI-compatible
// provider and a real `ptxbench serve` with fake GPUs (as test_agent.cpp): retrieved repair notes
// appended to a failed verdict's feedback (modes off, notes, notes+kernel), and repair trajectories
// that start from a given wrong kernel and its feedback (stored as turn 0, resumable); then the
// strict reading of both config sections.
#include <gtest/gtest.h>

#include <functional>
#include <mutex>

#include "notes/notes_feedback.h"
#include "notes/notes_store.h"
#include "notes/repair_note.h"
#include "agent/agent_run.h"
#include "agent/run_config.h"
#include "runs/run_store.h"
#include "runs/trajectory_export.h"
#include "agent/turn_loop.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "report/report_data.h"
#include "service/http_server.h"
#include "verdict/feedback.h"

using namespace ptxbench;

namespace {

constexpr const char* kDefinition = "gemm_n7168_k5120";  // op_type gemm

// A kernel whose fake verdict follows `marker`. Its identifiers (the inline PTX's mbarrier
// try_wait) are what note A was written about; comments are not searched, so the marker is not.
std::string kernel(const std::string& marker) {
  return "#include \"ptxbench_abi.h\"\n// " + marker +
         "\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {\n"
         "  asm volatile(\"mbarrier.try_wait.parity.shared::cta.b64 p, [bar], phase;\");\n  return 0;\n}\n";
}
std::string answer_with(const std::string& source) { return "Here is the kernel.\n\n```cuda\n" + source + "```\n"; }

const std::string kFailing = kernel("PTXB_FAKE_STATUS=INCORRECT_NUMERICAL PTXB_FAKE_SECONDS=0.02");
const std::string kPassing = kernel("PTXB_FAKE_SPEEDUP=1.5 PTXB_FAKE_SECONDS=0.02");

// An OpenAI-compatible endpoint answering by the number of assistant messages in the request
// (`answered`: 0 at turn 1 of a plain trajectory, 1 at turn 1 of a repair trajectory). While
// `refuse` is set it answers 400 (not retried: the trajectory ends as failed).
class FakeModel {
 public:
  using Script = std::function<std::string(int answered)>;
  explicit FakeModel(Script script) : m_script(std::move(script)), m_server(options(), [this](const HttpRequest& r) { return handle(r); }) {
    m_server.start();
  }
  [[nodiscard]] std::string url() const { return "http://" + m_server.address() + "/v1"; }
  [[nodiscard]] std::vector<ordered_json> bodies() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_bodies;
  }
  void refuse(bool on) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_refuse = on;
  }

 private:
  static HttpServerOptions options() {
    HttpServerOptions o;
    o.threads = 8;
    return o;
  }
  HttpResponse handle(const HttpRequest& r) {
    ordered_json body = ordered_json::parse(r.body);
    int answered = 0;
    for (const auto& m : body["messages"]) answered += m["role"] == "assistant";
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_refuse) return HttpResponse::json(400, R"({"error": {"message": "refused by the test", "type": "invalid_request_error"}})");
      m_bodies.push_back(body);
    }
    ordered_json out = {{"id", "fake-" + std::to_string(answered)},
                        {"object", "chat.completion"},
                        {"model", "fake-model"},
                        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", m_script(answered)}}}, {"finish_reason", "stop"}}}},
                        {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 50}, {"total_tokens", 1050}}}};
    return HttpResponse::json(200, out.dump());
  }
  Script m_script;
  mutable std::mutex m_mutex;
  std::vector<ordered_json> m_bodies;
  bool m_refuse = false;
  HttpServer m_server;
};

ordered_json model_run_config(const std::string& url) {
  return {{"policy", "model"},
          {"model", {{"provider", "openai"}, {"base_url", url}, {"model", "fake-model"}, {"api_key_env", ""}, {"max_tokens", 4096}}},
          {"definitions", {kDefinition}},
          {"prompt_tags", {"params"}},
          {"trajectories_per_tag", 1},
          {"num_turns", 3},
          {"target_speedup", 1.2},
          {"concurrency", 2},
          {"service", "local"}};
}

// Note A is about the failing kernel's mbarrier wait; note B about ldmatrix, which shares no term
// with it. Both are in the gemm family.
constexpr const char* kRuleA = "Wait on an mbarrier with the parity of the phase you expect to complete.";
constexpr const char* kRuleB = "Give ldmatrix row addresses that are 16-byte aligned.";
constexpr const char* kFixedMarker = "FIXED_KERNEL_OF_NOTE_A";

RepairNote note(int64_t trajectory, const std::string& wrong, const std::string& fixed, const NoteText& text,
                std::optional<double> speedup) {
  RepairNote n;
  n.op_family = "gemm";
  n.definition = kDefinition;
  n.source = {"run-0", trajectory, 1, 2, sha256_hex(wrong), sha256_hex(fixed)};
  n.wrong_status = "INCORRECT_NUMERICAL";
  n.text = text;
  n.fixed_speedup = speedup;
  n.teacher_model = "teacher";
  n.created_at = 1700000000.0;
  return n;
}

void build_notes_store(const std::string& path) {
  NotesStore store(path);
  std::string wrong_a = "asm volatile(\"mbarrier.try_wait.parity.shared::cta.b64 p, [bar], 1;\");\n";
  std::string fixed_a = "// " + std::string(kFixedMarker) + "\nasm volatile(\"mbarrier.try_wait.parity.shared::cta.b64 p, [bar], phase;\");\n";
  store.add(note(1, wrong_a, fixed_a,
                 {"The mbarrier try_wait used a constant parity.", kRuleA, "Track the phase bit and flip it each round.",
                  "mbarrier.try_wait.parity.shared::cta.b64 p, [bar], phase;"},
                 1.4),
            wrong_a, fixed_a);
  std::string wrong_b = "asm(\"ldmatrix.sync.aligned.m8n8.x4.b16 {r0,r1,r2,r3}, [addr];\");\n";
  std::string fixed_b = "asm(\"ldmatrix.sync.aligned.m8n8.x4.b16 {r0,r1,r2,r3}, [aligned_addr];\");\n";
  store.add(note(2, wrong_b, fixed_b,
                 {"Row addresses of ldmatrix were misaligned.", kRuleB, "Pad the tile rows to 16 bytes.",
                  "ldmatrix.sync.aligned.m8n8.x4.b16 {r0,r1,r2,r3}, [addr16];"},
                 2.0),
            wrong_b, fixed_b);
}

struct RepairRunTest : ::testing::Test {
  TempDir dir;
  std::string notes_path() const { return (dir.path() / "notes.db").string(); }
  AgentRunSetup setup() const {
    AgentRunSetup s;
    s.root = PTXBENCH_SOURCE_DIR;
    s.store = (dir.path() / "runs" / "runs.db").string();
    s.runs_dir = dir.path() / "runs";
    s.ptxbench = executable_dir() / "ptxbench";
    s.local_service_args = {"--fake-gpus", "2"};
    return s;
  }
  // Seeds for the repair runs: a wrong kernel of kDefinition per line.
  fs::path write_seeds(int n) const {
    std::string text;
    for (int i = 0; i < n; ++i)
      text += ordered_json{{"definition", kDefinition},
                           {"wrong_source", kernel("seed " + std::to_string(i))},
                           {"feedback", "SEED FEEDBACK " + std::to_string(i) + ": the output differs from the reference."},
                           {"status", "INCORRECT_NUMERICAL"},
                           {"origin", {{"run", "run-0"}, {"trajectory", i + 1}, {"turn", 2}}}}
                  .dump() +
              "\n";
    fs::path p = dir.path() / "seeds.jsonl";
    write_file_atomic(p, text);
    return p;
  }
};

// A turn's feedback as the model saw it without notes: the verdict, then the target, the stop
// rule and the turns left.
std::string plain_feedback(const RunInfo& run, const TurnRecord& t) {
  return turn_feedback(render_feedback(*t.verdict), run_config_from_json(run.config), t.turn);
}

// One trajectory: a failing answer at turn 1, a passing one at turn 2 (stops early).
std::string fail_then_pass(int answered) { return answer_with(answered == 0 ? kFailing : kPassing); }

struct NotesRunResult {
  std::vector<TurnRecord> turns;
  std::vector<ordered_json> bodies;
  RunInfo run;
};

NotesRunResult run_with_notes(const RepairRunTest& t, const std::string& mode) {
  FakeModel model(fail_then_pass);
  ordered_json cfg = model_run_config(model.url());
  cfg["repair_notes"] = {{"mode", mode}, {"store", t.notes_path()}, {"k", 3}};
  AgentRunResult r = start_run(run_config_from_json(cfg), t.setup());
  EXPECT_TRUE(r.complete());
  RunStore store(t.setup().store, RunStore::Open::existing);
  auto trajectories = store.list_trajectories(r.run_id);
  EXPECT_EQ(trajectories.size(), 1u);
  return {store.turns(trajectories.at(0).id), model.bodies(), store.run(r.run_id)};
}

}  // namespace

TEST_F(RepairRunTest, FailedFeedbackGetsTheMatchingNoteOnlyAndPassedFeedbackNone) {
  build_notes_store(notes_path());
  NotesStore notes(notes_path(), NotesStore::Open::existing);
  auto retrieved = notes.retrieve(kFailing, "gemm", 3);
  ASSERT_EQ(retrieved.size(), 1u) << "note B shares no term with the failing kernel";
  EXPECT_EQ(retrieved[0].note.text.rule, kRuleA);

  NotesRunResult r = run_with_notes(*this, "notes");
  ASSERT_EQ(r.turns.size(), 2u);
  EXPECT_EQ(r.turns[0].turn, 1);
  EXPECT_EQ(r.turns[0].status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(r.turns[1].status, "PASSED");
  const std::string& failed = *r.turns[0].feedback;
  std::string plain = plain_feedback(r.run, r.turns[0]);
  EXPECT_EQ(failed, feedback_with_notes(plain, notes, kFailing, "gemm", NotesMode::notes, 3));
  EXPECT_EQ(failed.rfind(plain, 0), 0u) << "the notes follow the feedback";
  EXPECT_NE(failed.find("## Repair notes"), std::string::npos);
  EXPECT_NE(failed.find(kRuleA), std::string::npos);
  EXPECT_EQ(failed.find(kRuleB), std::string::npos);
  EXPECT_EQ(failed.find("## Fastest fixed kernel"), std::string::npos) << "mode notes shows no kernel";
  EXPECT_EQ(*r.turns[1].feedback, plain_feedback(r.run, r.turns[1])) << "PASSED feedback never gets notes";
  // The model's second call carries the feedback with the note.
  ASSERT_EQ(r.bodies.size(), 2u);
  EXPECT_EQ(r.bodies[1]["messages"].back()["content"], failed);
  // The condition is in the stored config and the run's notes.
  EXPECT_EQ(r.run.config["repair_notes"]["mode"], "notes");
  EXPECT_EQ(r.run.config["repair_notes"]["k"], 3);
  EXPECT_NE(r.run.notes.find("[repair notes: notes, k 3]"), std::string::npos) << r.run.notes;
}

TEST_F(RepairRunTest, NotesAndKernelModeAlsoShowsTheFastestFixedKernel) {
  build_notes_store(notes_path());
  NotesRunResult r = run_with_notes(*this, "notes+kernel");
  ASSERT_EQ(r.turns.size(), 2u);
  const std::string& failed = *r.turns[0].feedback;
  NotesStore notes(notes_path(), NotesStore::Open::existing);
  EXPECT_EQ(failed, feedback_with_notes(plain_feedback(r.run, r.turns[0]), notes, kFailing, "gemm",
                                        NotesMode::notes_and_kernel, 3));
  EXPECT_NE(failed.find(kRuleA), std::string::npos);
  EXPECT_EQ(failed.find(kRuleB), std::string::npos);
  EXPECT_NE(failed.find("## Fastest fixed kernel"), std::string::npos);
  EXPECT_NE(failed.find(kFixedMarker), std::string::npos);
  EXPECT_EQ(*r.turns[1].feedback, plain_feedback(r.run, r.turns[1]));
  EXPECT_NE(r.run.notes.find("[repair notes: notes+kernel, k 3]"), std::string::npos) << r.run.notes;
}

TEST_F(RepairRunTest, ModeOffLeavesTheFeedbackByteEqual) {
  build_notes_store(notes_path());
  NotesRunResult r = run_with_notes(*this, "off");
  ASSERT_EQ(r.turns.size(), 2u);
  for (const auto& t : r.turns) EXPECT_EQ(*t.feedback, plain_feedback(r.run, t)) << "turn " << t.turn;
  EXPECT_FALSE(r.run.config.contains("repair_notes")) << "off is the default and is not stored";
  EXPECT_EQ(r.run.notes, "");
}

TEST_F(RepairRunTest, RepairTrajectoriesStartFromTheSeedAndCountTurnsFromOne) {
  fs::path seeds = write_seeds(2);
  // The seed is the first assistant message: answered == 1 at turn 1.
  FakeModel repair_model([](int answered) { return answer_with(answered == 1 ? kFailing : kPassing); });
  ordered_json cfg = model_run_config(repair_model.url());
  cfg.erase("trajectories_per_tag");
  cfg["repair_from"] = {{"file", seeds.string()}};
  AgentRunResult r = start_run(run_config_from_json(cfg), setup());
  ASSERT_TRUE(r.complete());
  RunStore store(setup().store, RunStore::Open::existing);
  auto trajectories = store.list_trajectories(r.run_id);
  ASSERT_EQ(trajectories.size(), 2u) << "one per seed";
  RunInfo run = store.run(r.run_id);
  EXPECT_EQ(run.config["repair_from"]["sha256"], sha256_hex(read_file(seeds)));
  EXPECT_FALSE(run.config.contains("trajectories_per_tag"));
  EXPECT_NE(run.notes.find("[repair from: " + seeds.string() + ", 2 seeds]"), std::string::npos) << run.notes;
  for (const auto& t : trajectories) {
    EXPECT_EQ(t.key.definition, kDefinition);
    EXPECT_EQ(t.key.prompt_tag, "params+repair");
    std::string seed_source = kernel("seed " + std::to_string(t.key.index));
    std::string seed_feedback = "SEED FEEDBACK " + std::to_string(t.key.index) + ": the output differs from the reference.";
    auto messages = store.messages(t.id);
    ASSERT_GE(messages.size(), 4u);
    EXPECT_EQ(messages[0].role, "system");
    EXPECT_EQ(messages[1].role, "user");
    EXPECT_EQ(messages[2].role, "assistant");
    EXPECT_EQ(messages[2].content, "```cuda\n" + seed_source + "```\n");
    EXPECT_EQ(messages[3].role, "user");
    EXPECT_EQ(messages[3].content, seed_feedback);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(messages[k].turn, 0) << "the seed exchange is part of the opening";
    EXPECT_EQ(messages[4].turn, 1);
    auto turns = store.turns(t.id);
    ASSERT_EQ(turns.size(), 2u);
    EXPECT_EQ(turns[0].turn, 1);
    EXPECT_EQ(turns[0].status, "INCORRECT_NUMERICAL");
    EXPECT_EQ(turns[1].turn, 2);
    EXPECT_EQ(turns[1].status, "PASSED");
    EXPECT_EQ(t.status, TrajectoryStatus::stopped_early);
    EXPECT_EQ(t.turns_completed, 2);

    // The export shows the seed as turn 0 messages, and only the model's turns as turns.
    ordered_json doc = trajectory_json(store, t.id);
    EXPECT_EQ(doc["messages"][2]["content"], messages[2].content);
    EXPECT_EQ(doc["messages"][2]["extra"]["ptxbench_turn"], 0);
    EXPECT_EQ(doc["info"]["ptxbench"]["turns"].size(), 2u);
    EXPECT_EQ(doc["info"]["ptxbench"]["turns"][0]["turn"], 1);
    EXPECT_EQ(doc["info"]["model_stats"]["api_calls"], 2);
    EXPECT_TRUE(fs::exists(setup().runs_dir / r.run_id / trajectory_dir_name(t) / "trajectory.json"));
  }
  // The model's first call of each trajectory: system, task, the seed and its feedback.
  std::vector<ordered_json> first_calls;
  for (const auto& b : repair_model.bodies())
    if (b["messages"].size() == 4) first_calls.push_back(b);
  ASSERT_EQ(first_calls.size(), 2u);
  for (const auto& b : first_calls) {
    EXPECT_EQ(b["messages"][0]["role"], "system");
    EXPECT_EQ(b["messages"][2]["role"], "assistant");
    EXPECT_NE(b["messages"][2]["content"].get<std::string>().find("// seed "), std::string::npos);
    EXPECT_EQ(b["messages"][3]["role"], "user");
    EXPECT_EQ(b["messages"][3]["content"].get<std::string>().rfind("SEED FEEDBACK ", 0), 0u);
  }
  EXPECT_EQ(repair_model.bodies().size(), 4u) << "2 turns × 2 trajectories";

  // The report reads the run: two turns per trajectory, the seed not among them.
  report::Report rep = report::build_report(store, {r.run_id}, {1, 2}, report::FakeVerdicts::allow, report::GroupBy::tag);
  ASSERT_EQ(rep.trajectories.size(), 2u);
  for (const auto& d : rep.trajectories) {
    ASSERT_EQ(d.records.size(), 2u);
    EXPECT_EQ(d.records[0].turn, 1);
  }
  ASSERT_FALSE(rep.groups.empty());
  bool tagged = false;
  for (const auto& g : rep.groups) tagged |= g.tag == "params+repair";
  EXPECT_TRUE(tagged) << "grouped by tag, the repair trajectories are their own rows";
}

TEST_F(RepairRunTest, SeedFeedbackOfARepairRunGetsNotesToo) {
  build_notes_store(notes_path());
  fs::path seeds = write_seeds(1);
  FakeModel repair_model([](int) { return answer_with(kPassing); });
  ordered_json cfg = model_run_config(repair_model.url());
  cfg.erase("trajectories_per_tag");
  cfg["repair_from"] = {{"file", seeds.string()}};
  cfg["repair_notes"] = {{"mode", "notes"}, {"store", notes_path()}};
  AgentRunResult r = start_run(run_config_from_json(cfg), setup());
  ASSERT_TRUE(r.complete());
  RunStore store(setup().store, RunStore::Open::existing);
  auto t = store.list_trajectories(r.run_id).at(0);
  auto messages = store.messages(t.id);
  NotesStore notes(notes_path(), NotesStore::Open::existing);
  std::string seed_feedback = "SEED FEEDBACK 0: the output differs from the reference.";
  EXPECT_EQ(messages.at(3).content, feedback_with_notes(seed_feedback, notes, kernel("seed 0"), "gemm", NotesMode::notes, 3));
  EXPECT_NE(messages.at(3).content.find(kRuleA), std::string::npos);
  auto turns = store.turns(t.id);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(*turns[0].feedback, plain_feedback(store.run(r.run_id), turns[0])) << "PASSED at turn 1: no notes";
}

// A repair run whose model refuses ends failed; --resume reopens it, the seed is not stored twice,
// and a seeds file that changed under the run is refused.
TEST_F(RepairRunTest, RepairRunResumesWithTheSeedStoredOnce) {
  fs::path seeds = write_seeds(2);
  FakeModel model([](int answered) { return answer_with(answered == 1 ? kFailing : kPassing); });
  model.refuse(true);
  ordered_json cfg = model_run_config(model.url());
  cfg.erase("trajectories_per_tag");
  cfg["repair_from"] = {{"file", seeds.string()}};
  AgentRunResult first = start_run(run_config_from_json(cfg), setup());
  EXPECT_EQ(first.failed, 2);

  std::string original = read_file(seeds);
  write_file_atomic(seeds, original + original);
  try {
    (void)resume_run(first.run_id, setup());
    ADD_FAILURE() << "resumed with a changed seeds file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since the run was started"), std::string::npos) << e.what();
  }
  write_file_atomic(seeds, original);

  model.refuse(false);
  AgentRunResult resumed = resume_run(first.run_id, setup());
  ASSERT_TRUE(resumed.complete());
  RunStore store(setup().store, RunStore::Open::existing);
  for (const auto& t : store.list_trajectories(first.run_id)) {
    auto messages = store.messages(t.id);
    int opening = 0;
    for (const auto& m : messages) opening += m.turn == 0;
    EXPECT_EQ(opening, 4) << "system, task, seed, seed feedback: once";
    auto turns = store.turns(t.id);
    ASSERT_EQ(turns.size(), 2u);
    EXPECT_EQ(turns[0].turn, 1);
    EXPECT_EQ(turns[1].status, "PASSED");
  }
}

TEST(RepairContext, LatestPairTreatsTheSeedAsTheLastExchangeUntilTurnOneHasFeedback) {
  std::vector<StoredMessage> opening = {{"system", "S", 0, 1}, {"user", "task", 0, 2}, {"assistant", "seed", 0, 3},
                                        {"user", "seed feedback", 0, 4}};
  auto at_turn_1 = TrajectoryRunner::shape_context(opening, ContextPolicy::latest);
  ASSERT_EQ(at_turn_1.size(), 3u);
  EXPECT_EQ(at_turn_1[1].content, "seed");
  auto later = opening;
  later.push_back({"assistant", "answer 1", 1, 5});
  later.push_back({"user", "feedback 1", 1, 6});
  auto at_turn_2 = TrajectoryRunner::shape_context(later, ContextPolicy::latest);
  ASSERT_EQ(at_turn_2.size(), 3u);
  EXPECT_EQ(at_turn_2[0].content, "task");
  EXPECT_EQ(at_turn_2[1].content, "answer 1");
  EXPECT_EQ(at_turn_2[2].content, "feedback 1");
  EXPECT_EQ(TrajectoryRunner::shape_context(later, ContextPolicy::full).size(), 5u);
}

TEST_F(RepairRunTest, ConfigSectionsAreStrictWithClearErrors) {
  build_notes_store(notes_path());
  ordered_json base = {{"policy", "expert"}, {"definitions", {kDefinition}}};
  auto fails = [&](const ordered_json& j, const std::vector<std::string>& fragments) {
    try {
      (void)run_config_from_json(j);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const InputError& e) {
      for (const auto& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
    }
  };
  auto with = [&](const char* key, const ordered_json& value) {
    ordered_json j = base;
    j[key] = value;
    return j;
  };
  // repair_notes
  fails(with("repair_notes", {{"mode", "sometimes"}, {"store", notes_path()}}), {"repair_notes.mode", "notes+kernel"});
  fails(with("repair_notes", {{"store", notes_path()}}), {"repair_notes", "mode"});
  fails(with("repair_notes", {{"mode", "notes"}}), {"repair_notes.store", "required"});
  fails(with("repair_notes", {{"mode", "notes"}, {"store", (dir.path() / "absent.db").string()}}), {"repair_notes.store", "no notes store"});
  fails(with("repair_notes", {{"mode", "notes"}, {"store", notes_path()}, {"k", 0}}), {"repair_notes.k"});
  fails(with("repair_notes", {{"mode", "notes"}, {"store", notes_path()}, {"k", 11}}), {"repair_notes.k"});
  fails(with("repair_notes", {{"mode", "notes"}, {"store", notes_path()}, {"top", 3}}), {"top"});
  fails(with("repair_notes", "notes"), {"repair_notes"});
  RunConfig off = run_config_from_json(with("repair_notes", {{"mode", "off"}, {"store", "anything"}}));
  EXPECT_FALSE(off.repair_notes.enabled());
  EXPECT_FALSE(off.to_json().contains("repair_notes"));
  RunConfig on = run_config_from_json(with("repair_notes", {{"mode", "notes+kernel"}, {"store", notes_path()}}));
  EXPECT_EQ(on.repair_notes.mode, NotesMode::notes_and_kernel);
  EXPECT_EQ(on.repair_notes.k, kDefaultNotesK);
  EXPECT_EQ(run_config_from_json(on.to_json()).to_json(), on.to_json());
  on.name = "sweep";
  EXPECT_EQ(run_notes(on), "sweep [repair notes: notes+kernel, k 3]");

  // repair_from
  fs::path seeds = write_seeds(2);
  fails(with("repair_from", {{"file", (dir.path() / "absent.jsonl").string()}}), {"repair_from.file", "no file"});
  fails(with("repair_from", seeds.string()), {"repair_from", "expected an object"});
  fails(with("repair_from", {{"file", seeds.string()}, {"filter", 1}}), {"filter"});
  fails(with("repair_from", {{"file", seeds.string()}, {"sha256", std::string(64, '0')}}), {"changed since the run was started"});
  auto seeds_file = [&](const std::string& text) {
    fs::path p = dir.path() / "bad.jsonl";
    write_file_atomic(p, text);
    return ordered_json{{"file", p.string()}};
  };
  fails(with("repair_from", seeds_file("\n  \n")), {"holds no seed"});
  fails(with("repair_from", seeds_file("{\"definition\": \"" + std::string(kDefinition) +
                                       "\", \"wrong_source\": \"x\", \"feedback\": \"f\", \"status\": \"WRONG\"}\n")),
        {"bad.jsonl:1", "status", "WRONG"});
  fails(with("repair_from", seeds_file("\n{\"definition\": \"" + std::string(kDefinition) + "\", \"wrong_source\": \"x\", \"status\": \"COMPILE_ERROR\"}\n")),
        {"bad.jsonl:2", "feedback"});
  fails(with("repair_from", seeds_file("{\"definition\": \"" + std::string(kDefinition) +
                                       "\", \"wrong_source\": \"x\", \"feedback\": \"f\", \"status\": \"COMPILE_ERROR\", \"turn\": 3}\n")),
        {"bad.jsonl:1", "turn"});
  fails(with("repair_from", seeds_file("not json\n")), {"bad.jsonl:1"});
  ordered_json repair = with("repair_from", {{"file", seeds.string()}});
  ordered_json per_tag = repair;
  per_tag["trajectories_per_tag"] = 2;
  fails(per_tag, {"trajectories_per_tag", "one trajectory per seed"});
  ordered_json other_def = repair;
  other_def["definitions"] = {kDefinition, "mha_with_lse_d128"};
  fails(other_def, {"definitions", "mha_with_lse_d128 has no seed"});
  ordered_json unlisted = repair;
  unlisted["definitions"] = {"mha_with_lse_d128"};
  fails(unlisted, {"repair_from", "seed 0", "does not list"});
  fails(with("prompt_tags", {"params+repair"}), {"prompt_tags", "+repair"});

  ordered_json derived = repair;
  derived.erase("definitions");
  RunConfig c = run_config_from_json(derived);
  ASSERT_TRUE(c.repair_from);
  EXPECT_EQ(c.definitions, std::vector<std::string>{kDefinition}) << "the seeds' definitions";
  ASSERT_EQ(c.repair_from->seeds.size(), 2u);
  EXPECT_EQ(c.repair_from->seeds[1].status, "INCORRECT_NUMERICAL");
  EXPECT_EQ(c.repair_from->seeds[1].origin["trajectory"], 2);
  ordered_json stored = c.to_json();
  EXPECT_EQ(stored["repair_from"]["sha256"], sha256_hex(read_file(seeds)));
  EXPECT_FALSE(stored.contains("trajectories_per_tag"));
  EXPECT_EQ(run_config_from_json(stored).to_json(), stored);
  EXPECT_EQ(repair_prompt_tag("params"), "params+repair");
  EXPECT_EQ(base_prompt_tag("params+repair"), "params");
  EXPECT_EQ(base_prompt_tag("params"), "params");
}

// Importing the original PTXBench's per-turn results (runs/import_original.h): what a hand-written
// sample in the release's columns becomes in a run store, idempotence, malformed rows and missing
// columns (nothing written), the refusals that keep imported and measured runs apart, an import
// into a store migrated from schema 1, and — where the original's repository is mirrored — the
// whole released file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "runs/import_original.h"
#include "runs/run_store.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "cpu/agent/run_store_schema.h"

using namespace ptxbench;

namespace {

const fs::path kSample = fs::path(PTXBENCH_TEST_DATA) / "fixtures" / "original" / "sample.csv";

struct ImportOriginalTest : ::testing::Test {
  TempDir dir{"import_original_test"};
  std::string store_path() const { return (dir.path() / "runs.db").string(); }
  // The sample with `line` (1-based; the header is 1) replaced by `text`.
  std::string sample_with(int line, const std::string& text, const std::string& name = "bad.csv") const {
    std::string in = read_file(kSample), out;
    int n = 1;
    std::size_t start = 0;
    while (start < in.size()) {
      std::size_t end = in.find('\n', start);
      std::string l = in.substr(start, end == std::string::npos ? std::string::npos : end - start);
      out += (n == line ? text : l) + "\n";
      ++n;
      if (end == std::string::npos) break;
      start = end + 1;
    }
    fs::path p = dir.path() / name;
    write_file_atomic(p, out);
    return p.string();
  }
};

std::map<std::string, RunInfo> runs_by_model_arch(const RunStore& store) {
  std::map<std::string, RunInfo> out;
  for (const auto& r : store.list_runs()) out[r.model + "/" + r.config.value("arch", "")] = r;
  return out;
}

const TrajectoryInfo& find_traj(const std::vector<TrajectoryInfo>& ts, const std::string& tag, int64_t index) {
  for (const auto& t : ts)
    if (t.key.prompt_tag == tag && t.key.index == index) return t;
  ADD_FAILURE() << "no trajectory " << tag << " / " << index;
  return ts.front();
}

constexpr const char* kModelB = "B, the \"second\" model";

}  // namespace

TEST(ImportOriginalMapping, EveryCorrectnessValueAndArch) {
  const std::map<std::string, std::string> expected = {
      {"Correct", "PASSED"},
      {"Numerical error", "INCORRECT_NUMERICAL"},
      {"Compilation error", "COMPILE_ERROR"},
      {"Runtime error", "RUNTIME_ERROR"},
      {"Kernel Execution Timeout", "TIMEOUT"},
      {"Sanitize Timeout", "SANITIZE_TIMEOUT"},
      {"Profiling Service Timeout", "SERVICE_TIMEOUT"},
      {"Extraction error", "EXTRACTION_ERROR"},
      {"Other error", "OTHER_ERROR"},
  };
  for (const auto& [value, status] : expected) EXPECT_EQ(original_status(value).value_or("?"), status) << value;
  EXPECT_FALSE(original_status("correct").has_value());
  EXPECT_EQ(original_arch_gpu("hopper").value_or(""), "NVIDIA H100");
  EXPECT_EQ(original_arch_gpu("blackwell").value_or(""), "NVIDIA B200");
  EXPECT_EQ(original_arch_tag("blackwell").value_or(""), "B");
  EXPECT_FALSE(original_arch_gpu("ampere").has_value());
}

TEST(ImportOriginalCsv, QuotingAndLineNumbers) {
  auto recs = parse_csv("a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n\n1,,3", "t.csv");
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].line, 1);
  EXPECT_EQ(recs[1].line, 2);
  EXPECT_EQ(recs[1].fields, (std::vector<std::string>{"x, y", "say \"hi\"", "two\nlines"}));
  EXPECT_EQ(recs[2].line, 5);  // after the two-line record and a blank line
  EXPECT_EQ(recs[2].fields, (std::vector<std::string>{"1", "", "3"}));
  try {
    (void)parse_csv("a,b\n1,\"open\n2,3\n", "t.csv");
    FAIL() << "an unterminated quote must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv:2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)parse_csv("a,b\n\"x\"y,1\n", "t.csv"), InputError);
}

TEST_F(ImportOriginalTest, SampleBecomesRunsTrajectoriesAndTurns) {
  OriginalRelease release = read_original_csv(kSample.string());  // reading alone touches no store
  ASSERT_EQ(release.runs.size(), 3u);
  EXPECT_EQ(release.runs[0].import_key, "ptxbench-original/" + release.sha256 + "/hopper/Model A");
  EXPECT_EQ(release.runs[2].trajectories.at(0).turns.size(), 3u);
  RunStore store(store_path());
  OriginalImportSummary s = import_original_csv(store, kSample.string());
  EXPECT_EQ(s.rows, 19);
  EXPECT_EQ(s.sha256, sha256_hex(read_file(kSample)));
  ASSERT_EQ(s.runs.size(), 3u);
  EXPECT_EQ(s.runs_created(), 3);
  EXPECT_EQ(s.models(), 2);
  EXPECT_EQ(s.trajectories(), 5);
  EXPECT_EQ(s.turns(), 19);
  EXPECT_TRUE(s.skipped.empty());
  EXPECT_EQ(s.runs[0].model, "Model A");
  EXPECT_EQ(s.runs[0].arch, "hopper");
  EXPECT_EQ(s.runs[1].arch, "blackwell");
  EXPECT_EQ(s.runs[2].model, kModelB);
  EXPECT_EQ(s.runs[2].short_trajectories, 1);
  EXPECT_EQ(s.runs[0].experiments, 1) << "a-gemm: the exp_dir's last component";
  EXPECT_EQ(s.runs[2].experiments, 1) << "b-mha/ (a trailing slash is ignored)";
  auto j = s.to_json();
  EXPECT_EQ(j["runs_created"], 3);
  EXPECT_EQ(j["runs"][1]["experiments"], 1);
  EXPECT_EQ(j["runs"][2]["model"], kModelB);

  auto runs = runs_by_model_arch(store);
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& [name, r] : runs) {
    EXPECT_EQ(r.origin, kOriginalOrigin) << name;
    EXPECT_TRUE(r.imported());
    EXPECT_EQ(r.status, RunStatus::finished);
    EXPECT_EQ(r.notes, "imported from the original PTXBench release");
    EXPECT_EQ(r.config["source"]["sha256"], s.sha256);
    EXPECT_EQ(r.config["source"]["rows"], 19);
    EXPECT_EQ(r.config["num_turns"], 4);
    EXPECT_TRUE(r.config.contains("column_mapping"));
    EXPECT_EQ(r.config["status_mapping"]["Sanitize Timeout"], "SANITIZE_TIMEOUT");
  }
  const RunInfo& ah = runs.at("Model A/hopper");
  const RunInfo& ab = runs.at("Model A/blackwell");
  const RunInfo& bh = runs.at(std::string(kModelB) + "/hopper");
  EXPECT_EQ(ah.gpu, "NVIDIA H100");
  EXPECT_EQ(ab.gpu, "NVIDIA B200");
  EXPECT_EQ(ah.config["source"]["run_rows"], 8);
  EXPECT_EQ(bh.config["reasoning_token_sources"], ordered_json::array({"output_tokens_details.thinking_tokens"}));
  EXPECT_EQ(bh.config["workloads"]["wl-mha"], "mha_with_lse_d128_S4096");

  // Model A on hopper: two full trajectories; turn = CSV turn + 1; speedup only where Correct.
  auto ts = store.list_trajectories(ah.id);
  ASSERT_EQ(ts.size(), 2u);
  const auto& t0 = find_traj(ts, "a-gemm", 0);
  EXPECT_EQ(t0.key.definition, "gemm_n7168_k5120");
  EXPECT_EQ(t0.key.workload_uuid, "wl-gemm");
  EXPECT_EQ(t0.status, TrajectoryStatus::finished);
  EXPECT_EQ(t0.turns_completed, 4);
  EXPECT_EQ(t0.best_speedup, 0.8);
  EXPECT_EQ(t0.best_target_speedup, 0.5);
  auto rows = store.turn_rows(t0.id);
  ASSERT_EQ(rows.size(), 4u);
  std::vector<std::string> statuses;
  for (const auto& r : rows) statuses.push_back(r.status);
  EXPECT_EQ(statuses, (std::vector<std::string>{"COMPILE_ERROR", "PASSED", "INCORRECT_NUMERICAL", "PASSED"}));
  EXPECT_EQ(rows[0].turn, 1);
  EXPECT_EQ(rows[3].turn, 4);
  EXPECT_EQ(rows[0].step, TurnStep::complete);
  EXPECT_FALSE(rows[0].speedup.has_value());  // the release's 0.0 of a failed turn is no measurement
  EXPECT_EQ(rows[1].speedup, 0.5);
  EXPECT_TRUE(rows[1].correct && rows[1].target_instruction);   // arch_tag "A, H", correct_with_arch 1
  EXPECT_TRUE(rows[3].correct && !rows[3].target_instruction);  // arch_tag "A", correct_with_arch 0
  EXPECT_EQ(rows[0].reasoning_tokens, 1200);
  EXPECT_EQ(rows[2].reasoning_tokens, 0);
  EXPECT_EQ(rows[0].prompt_tokens, 0);
  EXPECT_EQ(rows[0].completion_tokens, 0);  // not released

  const auto& t1 = find_traj(ts, "a-gemm", 1);
  statuses.clear();
  for (const auto& r : store.turn_rows(t1.id)) statuses.push_back(r.status);
  EXPECT_EQ(statuses, (std::vector<std::string>{"RUNTIME_ERROR", "TIMEOUT", "SANITIZE_TIMEOUT", "SERVICE_TIMEOUT"}));
  EXPECT_FALSE(t1.best_speedup.has_value());

  // The full records: complete, with usage, and no answer, candidate or verdict.
  auto recs = store.turns(t0.id);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_FALSE(recs[1].verdict.has_value());
  EXPECT_FALSE(recs[1].candidate_source.has_value());
  EXPECT_FALSE(recs[1].answer.has_value());
  ASSERT_TRUE(recs[1].usage.has_value());
  EXPECT_EQ(recs[1].usage->reasoning_tokens, 800);
  EXPECT_EQ(recs[1].usage->provider, "ptxbench-original");
  EXPECT_EQ(recs[1].usage->model, "Model A");
  EXPECT_EQ(store.resume_point(t0.id).next(), NextAction::done);

  // Model A on blackwell: extraction / other errors, then the "H, B" turn is target correct, "G" not.
  auto tb = store.list_trajectories(ab.id);
  ASSERT_EQ(tb.size(), 1u);
  EXPECT_EQ(tb[0].key.prompt_tag, "a-b200-gemm");
  EXPECT_EQ(tb[0].best_speedup, 0.3);
  EXPECT_EQ(tb[0].best_target_speedup, 0.3);
  statuses.clear();
  for (const auto& r : store.turn_rows(tb[0].id)) statuses.push_back(r.status);
  EXPECT_EQ(statuses, (std::vector<std::string>{"EXTRACTION_ERROR", "OTHER_ERROR", "PASSED", "PASSED"}));

  // Model B: the exp_dir's trailing slash is ignored; exp_000 holds 3 of the run's 4 turns; the
  // rows of exp_001 come out of order in the file and are stored by turn.
  auto tbh = store.list_trajectories(bh.id);
  ASSERT_EQ(tbh.size(), 2u);
  const auto& short_traj = find_traj(tbh, "b-mha", 0);
  EXPECT_EQ(short_traj.status, TrajectoryStatus::failed);
  EXPECT_NE(short_traj.stop_reason.find("3 of the run's 4 turns"), std::string::npos) << short_traj.stop_reason;
  EXPECT_EQ(short_traj.best_target_speedup, 0.9);
  const auto& ordered = find_traj(tbh, "b-mha", 1);
  auto orows = store.turn_rows(ordered.id);
  ASSERT_EQ(orows.size(), 4u);
  EXPECT_EQ(orows[2].status, "TIMEOUT");
  EXPECT_EQ(orows[3].speedup, 0.4);
  EXPECT_EQ(ordered.best_speedup, 0.4);
}

TEST_F(ImportOriginalTest, SecondImportChangesNothing) {
  RunStore store(store_path());
  auto first = import_original_csv(store, kSample.string());
  auto before = store.list_runs();
  auto second = import_original_csv(store, kSample.string());
  EXPECT_EQ(second.runs_created(), 0);
  ASSERT_EQ(second.runs.size(), 3u);
  int64_t skipped = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(second.runs[i].already_imported);
    EXPECT_EQ(second.runs[i].run_id, first.runs[i].run_id);
  }
  for (const auto& k : second.skipped) {
    skipped += k.rows;
    EXPECT_NE(k.reason.find("already imported"), std::string::npos) << k.reason;
  }
  EXPECT_EQ(skipped, 19);
  auto after = store.list_runs();
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_EQ(store.list_trajectories(after[i].id).size(), store.list_trajectories(before[i].id).size());
  }
  // A different file (one more row) is another import: all its runs are new.
  fs::path other = dir.path() / "other.csv";
  write_file_atomic(other, read_file(kSample) +
                               "\"B, the \"\"second\"\" model\",hopper,H,wl-mha,mha_with_lse_d128_S4096,mha_with_lse_d128,"
                               "/runs/b-mha/,exp_000,3,4300,output_tokens_details.thinking_tokens,Correct,1.1,H,1,1.1\n");
  auto third = import_original_csv(store, other.string());
  EXPECT_NE(third.sha256, first.sha256);
  EXPECT_EQ(third.runs_created(), 3);
  EXPECT_EQ(third.runs[2].short_trajectories, 0);
  EXPECT_EQ(store.list_runs().size(), 6u);
}

TEST_F(ImportOriginalTest, MalformedRowNamesItsLineAndWritesNothing) {
  const std::string good =
      "Model A,hopper,H,wl-gemm,gemm_M8192,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,"
      "completion_tokens_details.reasoning_tokens,Profiling Service Timeout,0.0,,0,0.0";
  struct Case {
    std::string row, message;
  };
  const std::vector<Case> cases = {
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Exploded,0.0,,0,0.0", "correctness 'Exploded'"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,x,40,src,Runtime error,0.0,,0,0.0", "turn 'x'"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,-4,src,Runtime error,0.0,,0,0.0", "reasoning_tokens"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,traj7,3,40,src,Runtime error,0.0,,0,0.0", "exp_NNN"},
      {"Model A,volta,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Runtime error,0.0,,0,0.0", "arch 'volta'"},
      {"Model A,hopper,B,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Runtime error,0.0,,0,0.0", "required_arch_tag"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Runtime error,0.0,H,1,0.0", "correct_with_arch is 1"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Correct,,H,1,0.0", "no speedup"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Correct,fast,H,1,0.0", "speedup 'fast'"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Correct,0.5,\"H, B\",1", "15 fields"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,2,40,src,Runtime error,0.0,,0,0.0", "also on line 8"},
      {"Model A,hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,5,40,src,Runtime error,0.0,,0,0.0", "follows no turn 3"},
      {",hopper,H,wl-gemm,g,gemm_n7168_k5120,/runs/a-gemm,exp_001,3,40,src,Runtime error,0.0,,0,0.0", "'model' is empty"},
  };
  {
    // The good line 9 imports (the harness edits line 9 of the sample).
    RunStore store((dir.path() / "good.db").string());
    EXPECT_NO_THROW(import_original_csv(store, sample_with(9, good, "good.csv")));
  }
  for (const auto& c : cases) {
    std::string file = sample_with(9, c.row);
    RunStore store(store_path());
    try {
      import_original_csv(store, file);
      ADD_FAILURE() << "accepted: " << c.row;
    } catch (const InputError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(file + ":9:"), std::string::npos) << what;
      EXPECT_NE(what.find(c.message), std::string::npos) << what;
    }
    EXPECT_TRUE(store.list_runs().empty()) << "nothing is written on " << c.message;
  }
}

TEST_F(ImportOriginalTest, MissingColumnIsNamed) {
  std::string in = read_file(kSample);
  std::string header = in.substr(0, in.find('\n'));
  std::string file = sample_with(1, header.substr(0, header.find(",speedup")) + header.substr(header.find(",arch_tag")));
  RunStore store(store_path());
  try {
    import_original_csv(store, file);
    FAIL() << "a header without speedup must be refused";
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find("no column 'speedup'"), std::string::npos) << what;
  }
  EXPECT_TRUE(store.list_runs().empty());
  fs::path empty = dir.path() / "empty.csv";
  write_file_atomic(empty, "");
  EXPECT_THROW(import_original_csv(store, empty.string()), InputError);
}

TEST_F(ImportOriginalTest, ImportedAndMeasuredRunsStayApart) {
  RunStore store(store_path());
  import_original_csv(store, kSample.string());
  const RunInfo imported = runs_by_model_arch(store).at("Model A/hopper");
  int64_t traj = store.list_trajectories(imported.id).front().id;

  // The turn steps refuse an imported run's trajectories.
  try {
    store.begin_turn(traj, 5);
    FAIL() << "begin_turn on an imported run";
  } catch (const RunStoreError& e) {
    EXPECT_NE(std::string(e.what()).find("imported"), std::string::npos) << e.what();
  }
  EXPECT_THROW(store.record_initial_messages(traj, {{"system", "rules"}}), RunStoreError);
  EXPECT_THROW(store.record_model_answer(traj, 4, "answer", ModelUsage{}), RunStoreError);
  EXPECT_THROW(store.complete_turn(traj, 4), RunStoreError);
  EXPECT_THROW(store.reopen_trajectory(traj), RunStoreError);
  EXPECT_THROW(store.set_run_status(imported.id, RunStatus::running), RunStoreError);
  EXPECT_THROW(store.import_turn(traj, {5, "PASSED", true, false, 1.0, {}}), RunStoreError) << "the trajectory is finished";

  // A measured run takes no imported turn.
  std::string measured = store.create_run({{"num_turns", 8}}, "ours");
  EXPECT_EQ(store.run(measured).origin, kMeasuredOrigin);
  EXPECT_FALSE(store.run(measured).imported());
  EXPECT_EQ(store.run(measured).gpu, "");
  int64_t ours = store.ensure_trajectory(measured, {"gemm_n7168_k5120", "wl", "contract", 0});
  try {
    store.import_turn(ours, {1, "PASSED", true, true, 1.1, {}});
    FAIL() << "import_turn into a measured run";
  } catch (const RunStoreError& e) {
    EXPECT_NE(std::string(e.what()).find("measured"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.turn_rows(ours).empty());

  // import_turn into an open trajectory of an imported run: checked, complete, bests raised.
  ImportedRun open;
  open.origin = "imported:test";
  open.import_key = "test/open";
  open.model = "m";
  open.gpu = "NVIDIA H100";
  open.config = {{"num_turns", 3}};
  open.trajectories.push_back({{"d", "w", "t", 0}, {}, TrajectoryStatus::running, ""});
  auto ids = store.import_runs({open});
  ASSERT_TRUE(ids.at(0).has_value());
  int64_t t = store.list_trajectories(*ids[0]).front().id;
  EXPECT_THROW(store.import_turn(t, {2, "PASSED", true, false, 1.0, {}}), RunStoreError) << "turn 1 comes first";
  EXPECT_THROW(store.import_turn(t, {1, "BOGUS", false, false, std::nullopt, {}}), RunStoreError);
  EXPECT_THROW(store.import_turn(t, {1, "PASSED", false, false, 1.0, {}}), RunStoreError) << "correct must match";
  EXPECT_THROW(store.import_turn(t, {1, "COMPILE_ERROR", false, true, std::nullopt, {}}), RunStoreError);
  EXPECT_THROW(store.import_turn(t, {1, "PASSED", true, false, -1.0, {}}), RunStoreError);
  store.import_turn(t, {1, "PASSED", true, false, 0.7, {}});
  store.import_turn(t, {2, "PASSED", true, true, 0.6, {}});
  store.import_turn(t, {3, kSanitizeTimeoutStatus, false, false, std::nullopt, {}});
  auto info = store.trajectory(t);
  EXPECT_EQ(info.best_speedup, 0.7);
  EXPECT_EQ(info.best_target_speedup, 0.6);
  EXPECT_EQ(info.turns_completed, 3);
  store.finish_trajectory(t, TrajectoryStatus::finished, "imported");
  EXPECT_EQ(store.resume_point(t).next(), NextAction::done);
  // The same key again: left alone. A measured origin is refused.
  EXPECT_FALSE(store.import_runs({open}).at(0).has_value());
  ImportedRun bad = open;
  bad.import_key = "test/bad";
  bad.origin = kMeasuredOrigin;
  EXPECT_THROW(store.import_runs({bad}), RunStoreError);
}

TEST_F(ImportOriginalTest, ImportRunsIsOneTransaction) {
  RunStore store(store_path());
  ImportedRun good;
  good.origin = "imported:test";
  good.import_key = "test/good";
  good.model = "m";
  good.config = ordered_json::object();
  good.trajectories.push_back({{"d", "w", "t", 0}, {{1, "PASSED", true, false, 0.5, {}}}, TrajectoryStatus::finished, ""});
  ImportedRun bad = good;
  bad.import_key = "test/bad";
  bad.trajectories[0].turns.push_back({2, "NOT_A_STATUS", false, false, std::nullopt, {}});
  EXPECT_THROW(store.import_runs({good, bad}), RunStoreError);
  EXPECT_TRUE(store.list_runs().empty()) << "the good run before the bad one is rolled back too";
}

TEST_F(ImportOriginalTest, ImportsIntoAStoreOfSchemaOne) {
  std::string measured;
  {
    RunStore store(store_path());
    measured = store.create_run({{"num_turns", 8}}, "ours", "before the migration");
  }
  test::downgrade_run_store(store_path(), 1);  // what version 1 wrote: runs without origin, gpu, import_key
  RunStore store(store_path());
  EXPECT_EQ(store.run(measured).origin, kMeasuredOrigin);
  EXPECT_EQ(store.run(measured).notes, "before the migration");
  auto s = import_original_csv(store, kSample.string());
  EXPECT_EQ(s.runs_created(), 3);
  EXPECT_EQ(store.list_runs().size(), 4u);
}

// The whole release, where the original's repository is mirrored (not in CI). Set
// PTXBENCH_ORIGINAL_CSV to the file, or PTXBENCH_ORIGINAL_REPO to a clone (bare or not).
TEST_F(ImportOriginalTest, RealReleaseFile) {
  std::string csv;
  if (const char* f = std::getenv("PTXBENCH_ORIGINAL_CSV"); f && *f) {
    csv = f;
  } else {
    const char* r = std::getenv("PTXBENCH_ORIGINAL_REPO");
    std::string repo = r && *r ? r : "/work/.mirror/zhang677+PTXBench/repo";
    if (!fs::exists(repo)) GTEST_SKIP() << "no mirror of the original PTXBench at " << repo;
    csv = (dir.path() / "reasoning_tokens_vs_performance.csv").string();
    std::string cmd = "git -C '" + repo +
                      "' show HEAD:benchmark/plot_viewer_v1/data/reasoning_tokens_vs_performance.csv > '" + csv +
                      "' 2>/dev/null";
    if (std::system(cmd.c_str()) != 0 || fs::file_size(csv) == 0) GTEST_SKIP() << "cannot read the CSV from " << repo;
  }
  RunStore store(store_path());
  auto s = import_original_csv(store, csv);
  EXPECT_EQ(s.rows, 13674);
  EXPECT_EQ(s.turns(), 13674);
  EXPECT_EQ(s.runs_created(), 17);  // model x arch
  EXPECT_EQ(s.models(), 13);
  EXPECT_EQ(s.trajectories(), 1712);
  int64_t experiments = 0;
  for (const auto& r : s.runs) experiments += r.experiments;
  EXPECT_EQ(experiments, 105) << "the release's 105 evaluation runs, each its own row in a report";
  EXPECT_TRUE(s.skipped.empty());
  int64_t turns = 0;
  for (const auto& r : store.list_runs())
    for (const auto& t : store.list_trajectories(r.id)) turns += t.turns_completed;
  EXPECT_EQ(turns, 13674);
  EXPECT_EQ(import_original_csv(store, csv).runs_created(), 0);
}

// Triton runs on the agent's side (issue 22): the run config's language (explicit or from the
// prompt tags, one per run), the ```python extraction, the service request's "language" field
// (sent only for Triton), the run store's candidates.language (schema 3, migrated from 2), the
// exported turn_<n>.py, and the expert policy's Triton fixture.
#include <gtest/gtest.h>

#include "agent/code_extract.h"
#include "agent/policy.h"
#include "agent/run_config.h"
#include "runs/run_store.h"
#include "runs/trajectory_export.h"
#include "agent/turn_loop.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sqlite_db.h"
#include "cpu/agent/run_store_schema.h"

using namespace ptxbench;

namespace {

ordered_json expert_config(std::vector<std::string> tags) {
  return {{"policy", "expert"}, {"definitions", {"gemm_n7168_k5120"}}, {"prompt_tags", tags}};
}

void expect_refused(const ordered_json& j, const std::string& fragment) {
  try {
    (void)run_config_from_json(j);
    ADD_FAILURE() << "accepted " << j.dump();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

const char* kTritonFile =
    "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef _k(c_ptr):\n    pass\n\n"
    "def run(A, B, C):\n    _k[(1,)](C)\n";

}  // namespace

TEST(TritonRunConfig, LanguageComesFromTheTagsOrTheFieldAndIsStored) {
  RunConfig cuda = run_config_from_json(expert_config({"params", "contract"}));
  EXPECT_EQ(cuda.language, CandidateLanguage::cuda);
  EXPECT_EQ(cuda.to_json()["language"], "cuda");
  RunConfig defaults = run_config_from_json({{"policy", "expert"}, {"definitions", {"gemm_n7168_k5120"}}});
  EXPECT_EQ(defaults.language, CandidateLanguage::cuda);

  RunConfig triton = run_config_from_json(expert_config({"triton-hopper", "triton-hopper-noguide"}));
  EXPECT_EQ(triton.language, CandidateLanguage::triton);
  EXPECT_EQ(triton.to_json()["language"], "triton");
  RunConfig again = run_config_from_json(triton.to_json());  // a resume reads the stored form back
  EXPECT_EQ(again.language, CandidateLanguage::triton);
  EXPECT_EQ(again.to_json(), triton.to_json());

  auto with_language = [](ordered_json j, const char* language) {
    j["language"] = language;
    return j;
  };
  EXPECT_EQ(run_config_from_json(with_language(expert_config({"triton-hopper"}), "triton")).language, CandidateLanguage::triton);
  EXPECT_EQ(run_config_from_json(with_language(expert_config({"params"}), "cuda")).language, CandidateLanguage::cuda);
  // An old stored config (no field) reads as CUDA.
  ordered_json old = cuda.to_json();
  old.erase("language");
  EXPECT_EQ(run_config_from_json(old).language, CandidateLanguage::cuda);
}

TEST(TritonRunConfig, UnknownLanguagesMixedTagsAndContradictionsAreRefused) {
  auto with_language = [](ordered_json j, ordered_json language) {
    j["language"] = std::move(language);
    return j;
  };
  expect_refused(with_language(expert_config({"triton-hopper"}), "tilelang"), "language");
  expect_refused(with_language(expert_config({"triton-hopper"}), "tilelang"), "cuda or triton");
  expect_refused(with_language(expert_config({"triton-hopper"}), "Triton"), "language");
  expect_refused(with_language(expert_config({"triton-hopper"}), 1), "language");
  expect_refused(expert_config({"params", "triton-hopper"}), "one language");
  expect_refused(with_language(expert_config({"params"}), "triton"), "Triton prompt tags");
  expect_refused(with_language({{"policy", "expert"}, {"definitions", {"gemm_n7168_k5120"}}}, "triton"), "default tags are CUDA");
  expect_refused(with_language(expert_config({"triton-hopper"}), "cuda"), "contradicts");
}

TEST(TritonExtraction, TakesTheLastPythonBlockThatDefinesRun) {
  std::string answer = std::string("Plan first.\n```python\n") + kTritonFile + "```\nUsage:\n```python\nrun(A, B, C)\n```\n" +
                       "and the CUDA I did not send:\n```cuda\nextern \"C\" int ptxb_run() { return 0; }\n```\n";
  Extraction e = extract_candidate(answer, CandidateLanguage::triton);
  ASSERT_TRUE(e.source) << e.error;
  EXPECT_EQ(*e.source, kTritonFile);
  EXPECT_EQ(e.blocks_seen, 3);
  // The same answer in a CUDA run takes the CUDA block.
  Extraction cuda = extract_candidate(answer, CandidateLanguage::cuda);
  ASSERT_TRUE(cuda.source);
  EXPECT_NE(cuda.source->find("ptxb_run"), std::string::npos);

  // Unnamed and py/python3 fences count; a later block that redefines run replaces an earlier one.
  Extraction py = extract_candidate(std::string("```py\n") + kTritonFile + "```\n```\ndef run (A, B, C):\n    pass\n```\n",
                                    CandidateLanguage::triton);
  ASSERT_TRUE(py.source);
  EXPECT_EQ(*py.source, "def run (A, B, C):\n    pass\n");
  // A ```cuda block, an indented (method) run, or no run at all is not a Triton candidate.
  EXPECT_FALSE(extract_candidate(std::string("```cuda\n") + kTritonFile + "```\n", CandidateLanguage::triton).source);
  Extraction method = extract_candidate("```python\nclass K:\n    def run(self, A):\n        pass\n```\n", CandidateLanguage::triton);
  EXPECT_FALSE(method.source);
  EXPECT_NE(method.error.find("defines run"), std::string::npos) << method.error;
  EXPECT_NE(method.error.find("```python"), std::string::npos) << method.error;
  Extraction none = extract_candidate("I would tile it.", CandidateLanguage::triton);
  EXPECT_FALSE(none.source);
  EXPECT_NE(none.error.find("```python"), std::string::npos) << none.error;
  EXPECT_EQ(none.error.find("ptxb_run"), std::string::npos) << none.error;
  Extraction cut = extract_candidate("```python\nimport triton\ndef run(A, B, C):\n    _k[(1,)](", CandidateLanguage::triton);
  EXPECT_FALSE(cut.source);
  EXPECT_NE(cut.error.find("not closed"), std::string::npos) << cut.error;
}

TEST(TritonServiceRequest, LanguageIsSentOnlyForTriton) {
  TrajectoryKey key{"gemm_n7168_k5120", "", "triton-hopper", 0};
  RunConfig triton = run_config_from_json(expert_config({"triton-hopper"}));
  ordered_json body = evaluation_request(key, kTritonFile, triton).to_json();
  EXPECT_EQ(body["language"], "triton") << body.dump();
  EXPECT_EQ(body["source"], kTritonFile);
  EXPECT_FALSE(body.contains("workload")) << "the default workload is named by none";
  RunConfig cuda = run_config_from_json(expert_config({"params"}));
  ordered_json cuda_body = evaluation_request({"gemm_n7168_k5120", "w1", "params", 0}, "// k", cuda).to_json();
  EXPECT_FALSE(cuda_body.contains("language")) << cuda_body.dump();  // exactly what services before the field take
  EXPECT_EQ(cuda_body["definition"], "gemm_n7168_k5120");
  EXPECT_EQ(cuda_body["workload"], "w1");
}

// The run's eval_options become the request's typed options, read as the service reads them: a
// misspelt or out-of-range option is the config's error, named, before anything is submitted.
TEST(TritonServiceRequest, TheRunsEvalOptionsAreReadAsTheServiceReadsThem) {
  RunConfig c = run_config_from_json(expert_config({"params"}));
  c.eval_options = {{"trials", 3}, {"profile", false}, {"seed", 11u}};
  EvalRequest r = evaluation_request({"gemm_n7168_k5120", "", "params", 0}, "// k", c);
  ASSERT_TRUE(r.trials);
  EXPECT_EQ(*r.trials, 3);
  EXPECT_FALSE(r.profile);
  EXPECT_TRUE(r.sanitize);
  EXPECT_EQ(r.seed.value_or(0), 11u);
  c.eval_options = {{"trails", 3}};
  try {
    (void)evaluation_request({"gemm_n7168_k5120", "", "params", 0}, "// k", c);
    ADD_FAILURE() << "a misspelt option was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("trails"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eval_options"), std::string::npos) << e.what();
  }
  c.eval_options = {{"trials", 0}};
  EXPECT_THROW((void)evaluation_request({"gemm_n7168_k5120", "", "params", 0}, "// k", c), InputError);
}

TEST(TritonRunStore, CandidatesKeepTheirLanguageAndTheExportNamesThemPy) {
  TempDir dir;
  std::string path = (dir.path() / "runs.db").string();
  RunStore store(path);
  std::string run = store.create_run(run_config_from_json(expert_config({"triton-hopper"})).to_json(), "expert");
  int64_t t = store.ensure_trajectory(run, {"gemm_n7168_k5120", "", "triton-hopper", 0});
  store.record_initial_messages(t, {{"system", "rules", 0, 0}, {"user", "task", 0, 0}});
  store.begin_turn(t, 1);
  store.record_model_answer(t, 1, std::string("```python\n") + kTritonFile + "```\n", ModelUsage{});
  store.record_candidate(t, 1, kTritonFile, CandidateLanguage::triton);
  store.record_submission(t, 1, "task-1");
  auto turns = store.turns(t);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].candidate_language, CandidateLanguage::triton);
  fs::path folder = export_trajectory(store, t, dir.path() / "export");
  EXPECT_TRUE(fs::exists(folder / "turn_1.py"));
  EXPECT_FALSE(fs::exists(folder / "turn_1.cu"));
  ordered_json doc = trajectory_json(store, t);
  EXPECT_EQ(doc["info"]["ptxbench"]["turns"][0]["candidate_file"], "turn_1.py");
  EXPECT_EQ(doc["info"]["ptxbench"]["turns"][0]["candidate_language"], "triton");

  // The default is CUDA, as every candidate stored before the column.
  int64_t c = store.ensure_trajectory(run, {"gemm_n7168_k5120", "", "params", 0});
  store.record_initial_messages(c, {{"system", "rules", 0, 0}, {"user", "task", 0, 0}});
  store.begin_turn(c, 1);
  store.record_model_answer(c, 1, "```cuda\nint ptxb_run();\n```\n", ModelUsage{});
  store.record_candidate(c, 1, "int ptxb_run();\n");
  EXPECT_EQ(store.turns(c)[0].candidate_language, CandidateLanguage::cuda);
  EXPECT_TRUE(fs::exists(export_trajectory(store, c, dir.path() / "export") / "turn_1.cu"));
}

TEST(TritonRunStore, SchemaTwoStoresMigrateWithCudaCandidates) {
  TempDir dir;
  std::string path = (dir.path() / "runs.db").string();
  int64_t t = 0;
  {
    RunStore store(path);
    std::string run = store.create_run({{"num_turns", 2}}, "m");
    t = store.ensure_trajectory(run, {"gemm_n7168_k5120", "", "params", 0});
    store.record_initial_messages(t, {{"system", "rules", 0, 0}, {"user", "task", 0, 0}});
    store.begin_turn(t, 1);
    store.record_model_answer(t, 1, "```cuda\nint ptxb_run();\n```\n", ModelUsage{});
    store.record_candidate(t, 1, "int ptxb_run();\n");
  }
  test::downgrade_run_store(path, 2);  // what version 2 wrote: candidates without a language
  RunStore store(path, RunStore::Open::existing);
  {
    SqliteDb db(path);
    auto st = db.prepare("PRAGMA user_version");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.integer(0), RunStore::kSchemaVersion);
  }
  auto turns = store.turns(t);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].candidate_language, CandidateLanguage::cuda);
  EXPECT_EQ(turns[0].candidate_source, "int ptxb_run();\n");
}

TEST(TritonExpertPolicy, AnswersTheTritonFixtureInAPythonBlock) {
  ExpertSource e = find_expert_source(PTXBENCH_SOURCE_DIR, "gemm_n7168_k5120", CandidateLanguage::triton);
  EXPECT_EQ(e.origin, "tests/fixtures/triton/suite.json:gemm_tl_dot");
  EXPECT_NE(e.source.find("@triton.jit"), std::string::npos);
  EXPECT_EQ(find_expert_source(PTXBENCH_SOURCE_DIR, "gemm_n7168_k5120").origin, "knowledge/hopper/experts/gemm_n7168_k5120.cu");
  EXPECT_THROW(find_expert_source(PTXBENCH_SOURCE_DIR, "mha_bwd_d128", CandidateLanguage::triton), InputError);

  auto policy = make_expert_policy(PTXBENCH_SOURCE_DIR, CandidateLanguage::triton);
  TrajectoryKey key{"gemm_n7168_k5120", "", "triton-hopper", 0};
  PolicyRequest r;
  r.key = &key;
  r.turn = 1;
  PolicyAnswer a = policy->answer(r);
  Extraction x = extract_candidate(a.text, CandidateLanguage::triton);
  ASSERT_TRUE(x.source) << x.error;
  EXPECT_EQ(*x.source, e.source);
}

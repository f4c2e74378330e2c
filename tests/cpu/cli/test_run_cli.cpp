// `ptxbench run` as a person meets it (issue 34): a failed preflight exits 2 or 3 and stores
// nothing; `run --list` has a header, aligned columns and filters; `run delete`, `archive`,
// `unarchive`; a line on stderr per retry while the model endpoint answers 503; "fake" in every
// progress line of a run on the fake evaluation backend; `run --dry-run` stores nothing.
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <set>
#include <sstream>

#include "runs/run_store.h"
#include "cpu/cli/cli_process.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "helpers/fake_provider.h"

using namespace ptxbench;
using namespace ptxbench::test;
using fakes::FakeCall;
using fakes::FakeProvider;
using fakes::FakeTurn;
using fakes::Scripted;

namespace {

constexpr const char* kGemm = "gemm_n7168_k5120";

ProcessResult expect_exit(const std::vector<std::string>& args, int code) {
  ProcessResult r = run_ptxbench(args);
  EXPECT_EQ(r.status.signal, 0) << describe_run(args, r);
  EXPECT_EQ(r.status.exit_code, code) << describe_run(args, r);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

ordered_json model_config(const std::string& url) {
  return {{"provider", "openai"}, {"base_url", url + "/v1"}, {"model", "fake-model"}, {"api_key_env", ""},
          {"max_tokens", 256},    {"backoff_base_s", 0.05},  {"backoff_cap_s", 0.1}};
}

ordered_json run_config(const ordered_json& model, const std::string& service = "local") {
  return {{"policy", "model"}, {"model", model},           {"definitions", {kGemm}}, {"prompt_tags", {"params"}},
          {"trajectories_per_tag", 1}, {"num_turns", 2}, {"service", service}};
}

std::string passing_kernel() {
  return "```cuda\n#include \"ptxbench_abi.h\"\n// PTXB_FAKE_SPEEDUP=1.5 PTXB_FAKE_SECONDS=0.01\n"
         "extern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n```\n";
}

FakeTurn passing_turn() {
  FakeTurn t;
  t.text = passing_kernel();
  return t;
}

struct RunCli : ::testing::Test {
  TempDir dir{"run_cli"};
  [[nodiscard]] std::string store() const { return (dir.path() / "runs" / "runs.db").string(); }
  [[nodiscard]] std::string write_config(const ordered_json& cfg, const std::string& name = "run.json") const {
    fs::path p = dir.path() / name;
    write_file_atomic(p, cfg.dump(2));
    return p.string();
  }
  /// `run --config FILE` with a local service of one fake GPU.
  [[nodiscard]] std::vector<std::string> run_args(const std::string& config) const {
    return {"run", "--config", config, "--store", store(), "--runs-dir", (dir.path() / "runs").string(),
            "--local-service-arg=--fake-gpus", "--local-service-arg=1"};
  }
};

}  // namespace

TEST_F(RunCli, AFailedPreflightExitsWithItsCodeAndStoresNothing) {
  FakeProvider model;
  model.set_responder([](const FakeCall&) { return passing_turn(); });

  ordered_json no_key = model_config(model.url());
  no_key["api_key_env"] = "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET";
  ProcessResult key = expect_exit(run_args(write_config(run_config(no_key), "no_key.json")), 2);
  EXPECT_TRUE(contains(key.err.text, "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET is not set")) << key.err.text;

  ProcessResult endpoint = expect_exit(run_args(write_config(run_config(model_config("http://127.0.0.1:1")), "no_model.json")), 3);
  EXPECT_TRUE(contains(endpoint.err.text, "model endpoint http://127.0.0.1:1/v1")) << endpoint.err.text;
  EXPECT_TRUE(contains(endpoint.err.text, "cannot be reached")) << endpoint.err.text;

  ProcessResult service =
      expect_exit(run_args(write_config(run_config(model_config(model.url()), "http://127.0.0.1:1"), "no_service.json")), 3);
  EXPECT_TRUE(contains(service.err.text, "http://127.0.0.1:1")) << service.err.text;

  for (const auto* r : {&key, &endpoint, &service}) EXPECT_FALSE(contains(r->out.text, "started")) << r->out.text;
  EXPECT_FALSE(fs::exists(store())) << "nothing is stored before every preflight passed";
  EXPECT_TRUE(model.calls().empty());
  ProcessResult list = expect_exit({"run", "--list", "--store", store()}, 2);
  EXPECT_TRUE(contains(list.err.text, store())) << list.err.text;
}

TEST_F(RunCli, ListHasAHeaderAlignedColumnsAndFilters) {
  fs::create_directories(dir.path() / "runs");
  std::string alpha_old, beta, alpha, imported;
  {
    RunStore s(store());
    alpha_old = s.create_run({{"policy", "model"}}, "model-alpha", "an old one");
    s.set_run_status(alpha_old, RunStatus::finished);
    s.set_run_archived(alpha_old, true);
    beta = s.create_run({{"policy", "model"}}, "model-beta", "sweep");
    s.set_run_status(beta, RunStatus::failed, "the evaluation service went away");
    alpha = s.create_run({{"policy", "model"}}, "model-alpha");  // held by this (live) test process
    ImportedRun orig;
    orig.origin = "imported:ptxbench-orig";
    orig.import_key = "orig-1";
    orig.model = "their-model";
    orig.gpu = "H100";
    orig.config = {{"source", "test"}};
    imported = *s.import_runs({orig}).at(0);
  }
  ProcessResult all = expect_exit({"run", "--list", "--store", store()}, 0);
  std::vector<std::string> lines = lines_of(all.out.text);
  ASSERT_EQ(lines.size(), 4u) << all.out.text << "(header, 3 runs; the archived one hidden)";
  const std::string& header = lines[0];
  EXPECT_EQ(header.rfind("ID", 0), 0u) << header;
  for (const char* column : {"STATUS", "ORIGIN", "GPU", "MODEL", "NOTES"}) EXPECT_TRUE(contains(header, column)) << header;
  // Aligned: every row's status and model start under their headings.
  std::size_t status_at = header.find("STATUS"), model_at = header.find("MODEL");
  std::map<std::string, std::string> status_of = {{beta, "failed"}, {alpha, "running"}, {imported, "finished"}};
  std::map<std::string, std::string> model_of = {{beta, "model-beta"}, {alpha, "model-alpha"}, {imported, "their-model"}};
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string id = lines[i].substr(0, lines[i].find(' '));
    ASSERT_TRUE(status_of.count(id)) << lines[i];
    EXPECT_EQ(lines[i].substr(status_at, status_of[id].size()), status_of[id]) << lines[i];
    EXPECT_EQ(lines[i].substr(model_at, model_of[id].size()), model_of[id]) << lines[i];
  }
  EXPECT_TRUE(contains(all.out.text, "[the evaluation service went away]")) << "a failed run says why";

  auto ids = [&](const std::vector<std::string>& filters) {
    std::vector<std::string> args = {"run", "--list", "--json", "--store", store()};
    args.insert(args.end(), filters.begin(), filters.end());
    ProcessResult r = expect_exit(args, 0);
    std::set<std::string> out;
    for (const auto& run : ordered_json::parse(r.out.text)) out.insert(run["id"].get<std::string>());
    return out;
  };
  EXPECT_EQ(ids({}), (std::set<std::string>{beta, alpha, imported}));
  EXPECT_EQ(ids({"--all"}), (std::set<std::string>{alpha_old, beta, alpha, imported}));
  EXPECT_EQ(ids({"--model", "ALPHA"}), (std::set<std::string>{alpha}));
  EXPECT_EQ(ids({"--model", "alpha", "--all"}), (std::set<std::string>{alpha_old, alpha}));
  EXPECT_EQ(ids({"--status", "failed"}), (std::set<std::string>{beta}));
  EXPECT_EQ(ids({"--status", "failed", "--status", "running"}), (std::set<std::string>{beta, alpha}));
  EXPECT_EQ(ids({"--origin", "imported"}), (std::set<std::string>{imported}));
  EXPECT_EQ(ids({"--origin", "imported:ptxbench-orig"}), (std::set<std::string>{imported}));
  EXPECT_EQ(ids({"--origin", "measured"}), (std::set<std::string>{beta, alpha}));

  ProcessResult json = expect_exit({"run", "--list", "--json", "--status", "failed", "--store", store()}, 0);
  ordered_json failed = ordered_json::parse(json.out.text);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["status"], "failed");
  EXPECT_EQ(failed[0]["failure"], "the evaluation service went away");
  EXPECT_EQ(failed[0]["archived"], false);

  ProcessResult none = expect_exit({"run", "--list", "--model", "gamma", "--store", store()}, 0);
  EXPECT_TRUE(contains(none.out.text, "no run matches")) << none.out.text;
  expect_exit({"run", "--list", "--status", "sleeping", "--store", store()}, 2);
  expect_exit({"run", "--list", "--origin", "elsewhere", "--store", store()}, 2);
  expect_exit({"run", "--model", "alpha", "--store", store()}, 2);  // filters go with --list

  // archive / unarchive / delete
  expect_exit({"run", "archive", beta, "--store", store()}, 0);
  EXPECT_EQ(ids({}), (std::set<std::string>{alpha, imported}));
  expect_exit({"run", "unarchive", beta, "--store", store()}, 0);
  EXPECT_EQ(ids({}), (std::set<std::string>{beta, alpha, imported}));
  expect_exit({"run", "archive", "no-such-run", "--store", store()}, 2);
  ProcessResult held = expect_exit({"run", "delete", alpha, "--store", store()}, 2);
  EXPECT_TRUE(contains(held.err.text, "is running in pid " + std::to_string(::getpid()))) << held.err.text;
  EXPECT_TRUE(contains(held.err.text, "--force")) << held.err.text;
  ProcessResult deleted = expect_exit({"run", "delete", beta, imported, "--store", store()}, 0);
  EXPECT_TRUE(contains(deleted.out.text, "deleted run " + beta)) << deleted.out.text;
  expect_exit({"run", "delete", alpha, "--force", "--store", store()}, 0);
  EXPECT_EQ(ids({"--all"}), (std::set<std::string>{alpha_old}));
  expect_exit({"run", "delete", "no-such-run", "--store", store()}, 2);
}

// A real run on the local fake service: while the endpoint answers 503, a line per retry on
// stderr; every progress line says "fake"; the run then archives and still reports by id.
TEST_F(RunCli, RetriesAreSaidAndFakeRunsSayFake) {
  FakeProvider model;
  model.push(Scripted(503, R"({"error": {"message": "overloaded", "type": "server_error"}})"), 2);
  model.set_responder([](const FakeCall&) { return passing_turn(); });
  ProcessResult run = expect_exit(run_args(write_config(run_config(model_config(model.url())))), 0);
  EXPECT_TRUE(contains(run.err.text, "[model] openai fake-model: attempt 1 of 9 failed (HTTP 503: overloaded); retrying in"))
      << run.err.text;
  EXPECT_TRUE(contains(run.err.text, "[model] openai fake-model: attempt 2 of 9 failed (HTTP 503")) << run.err.text;
  int progress = 0;
  for (const auto& line : lines_of(run.out.text)) {
    if (line.rfind("[run", 0) != 0) continue;
    ++progress;
    EXPECT_TRUE(contains(line, "fake")) << line;
  }
  EXPECT_GE(progress, 4) << run.out.text << "(started, the verdict, the trajectory's end, the totals, the summary)";

  RunStore s(store(), RunStore::Open::existing);
  std::string id = s.list_runs().at(0).id;
  EXPECT_EQ(s.run(id).status, RunStatus::finished);
  expect_exit({"run", "archive", id, "--store", store()}, 0);
  ProcessResult list = expect_exit({"run", "--list", "--store", store()}, 0);
  EXPECT_FALSE(contains(list.out.text, id)) << list.out.text;
  ProcessResult report = expect_exit({"report", id, "--store", store(), "--allow-fake"}, 0);
  EXPECT_TRUE(contains(report.out.text, id)) << report.out.text;
}

TEST_F(RunCli, DryRunChecksTheConfigAndStoresNothing) {
  ordered_json model = model_config("http://127.0.0.1:1");  // never contacted
  model["api_key_env"] = "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET";
  std::string cfg = write_config(run_config(model, "http://127.0.0.1:1"));
  ProcessResult dry = expect_exit({"run", "--dry-run", "--config", cfg, "--store", store()}, 0);
  EXPECT_TRUE(contains(dry.out.text, "Dry run of " + cfg)) << dry.out.text;
  EXPECT_TRUE(contains(dry.out.text, "turn 1 INCORRECT_NUMERICAL, turn 2 PASSED")) << dry.out.text;
  EXPECT_FALSE(fs::exists(store()));
  expect_exit({"run", "--dry-run", "--store", store()}, 2);  // --dry-run goes with --config
  ordered_json bad = run_config(model, "http://127.0.0.1:1");
  bad["prompt_tags"] = {"no-such-tag"};
  expect_exit({"run", "--dry-run", "--config", write_config(bad, "bad.json")}, 2);
}

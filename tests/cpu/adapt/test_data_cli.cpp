// `ptxbench data build` and `ptxbench data show` on the built binary, against a scripted store:
// the dry run's counts, a real build's folder, --json output that parses, and exit code 2 for a
// recipe that lists a held-out definition.
#include <gtest/gtest.h>

#include <algorithm>

#include "../report/test_report_support.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "common/subprocess.h"

using namespace ptxbench;

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

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

/// One run: gemm_a X C(1.3, target) (one pair, one correct kernel) and a held-out mha_held X C.
struct CliStore {
  TempDir dir{"data_cli_test"};
  std::string store, run;
  CliStore() {
    store = (dir.path() / "runs.db").string();
    RunStore s(store);
    run = s.create_run({{"policy", "model"}, {"num_turns", 2}}, "model-1");
    test::ScriptedTurn x{"COMPILE_ERROR"}, c{"PASSED", 1.3, true};
    x.text = "a1";
    c.text = "a2";
    test::add_trajectory(s, run, {"gemm_a", "", "params", 0}, {x, c}, test::finished());
    x.text = "h1";
    c.text = "h2";
    test::add_trajectory(s, run, {"mha_held", "", "params", 0}, {x, c}, test::finished());
  }
  std::string recipe(const ordered_json& j, const std::string& name) const {
    fs::path p = dir.path() / name;
    write_file_atomic(p, j.dump(2));
    return p.string();
  }
};

}  // namespace

TEST(DataCli, DryRunBuildAndShow) {
  ASSERT_TRUE(fs::exists(executable_dir() / "ptxbench")) << "build the ptxbench target";
  CliStore s;
  ordered_json j = {{"name", "cli"}, {"kind", "fixit"}, {"runs", {s.run}}, {"held_out", {"mha_held"}}, {"shuffle_seed", 3}};
  std::string recipe = s.recipe(j, "fixit.json");

  ProcessResult dry = run_cli({"data", "build", recipe, "--store", s.store, "--dry-run"});
  ASSERT_EQ(dry.status.exit_code, 0) << describe(dry);
  EXPECT_TRUE(contains(dry.out.text, "trajectories: read 1, held out (never read) 1, outside the problem set 0")) << dry.out.text;
  EXPECT_TRUE(contains(dry.out.text, "-> 1 pairs; kept 1")) << dry.out.text;
  EXPECT_TRUE(contains(dry.out.text, "dry run: no teacher called, nothing written")) << dry.out.text;

  ProcessResult dry_json = run_cli({"data", "build", recipe, "--store", s.store, "--dry-run", "--json"});
  ASSERT_EQ(dry_json.status.exit_code, 0) << describe(dry_json);
  auto plan = ordered_json::parse(dry_json.out.text);
  EXPECT_EQ(plan["selection"]["pairs"]["pairs"], 1);
  EXPECT_EQ(plan["selection"]["sources"]["held_out_skipped"], 1);

  fs::path out = s.dir.path() / "dataset";
  ProcessResult built = run_cli({"data", "build", recipe, "--store", s.store, "--out", out.string(), "--json"});
  ASSERT_EQ(built.status.exit_code, 0) << describe(built);
  auto manifest = ordered_json::parse(built.out.text);
  EXPECT_EQ(manifest["records"]["total"], 1);
  EXPECT_EQ(manifest, ordered_json::parse(read_file(out / "manifest.json")));
  auto record = ordered_json::parse(read_file(out / "train.jsonl"));
  EXPECT_EQ(record["meta"]["definition"], "gemm_a");
  EXPECT_EQ(record["messages"].size(), 5u);

  ProcessResult shown = run_cli({"data", "show", out.string()});
  ASSERT_EQ(shown.status.exit_code, 0) << describe(shown);
  EXPECT_TRUE(contains(shown.out.text, "records: 1 (train 1, eval 0); teacher: none")) << shown.out.text;
  EXPECT_TRUE(contains(shown.out.text, "sha256 ok")) << shown.out.text;
}

TEST(DataCli, BadRecipesAreUsageErrors) {
  ASSERT_TRUE(fs::exists(executable_dir() / "ptxbench")) << "build the ptxbench target";
  CliStore s;
  ordered_json j = {{"name", "cli"},           {"kind", "kernelgen"}, {"runs", {s.run}},
                    {"problem_set", {"gemm_a", "mha_held"}}, {"held_out", {"mha_held"}}, {"shuffle_seed", 3}};
  ProcessResult held = run_cli({"data", "build", s.recipe(j, "held.json"), "--store", s.store, "--dry-run"});
  EXPECT_EQ(held.status.exit_code, 2) << describe(held);
  EXPECT_TRUE(contains(held.err.text, "problem_set: 'mha_held' is held out")) << held.err.text;

  j["problem_set"] = "all";
  j["runs"] = {"no-such-run"};
  ProcessResult unknown = run_cli({"data", "build", s.recipe(j, "unknown.json"), "--store", s.store, "--dry-run"});
  EXPECT_EQ(unknown.status.exit_code, 2) << describe(unknown);
  EXPECT_TRUE(contains(unknown.err.text, "no run 'no-such-run'")) << unknown.err.text;

  ProcessResult no_out = run_cli({"data", "build", s.recipe(j, "x.json"), "--store", s.store});
  EXPECT_EQ(no_out.status.exit_code, 2) << describe(no_out);
  ProcessResult no_dir = run_cli({"data", "show", (s.dir.path() / "nothing").string()});
  EXPECT_EQ(no_dir.status.exit_code, 2) << describe(no_dir);
}

TEST(DataCli, SeedsFromARunToAFileOrStdout) {
  ASSERT_TRUE(fs::exists(executable_dir() / "ptxbench")) << "build the ptxbench target";
  CliStore s;
  fs::path seeds = s.dir.path() / "seeds.jsonl";
  ProcessResult r = run_cli({"data", "seeds", "--from", s.run, "--store", s.store, "--out", seeds.string(), "--json"});
  ASSERT_EQ(r.status.exit_code, 0) << describe(r);
  ordered_json summary = ordered_json::parse(r.out.text);
  EXPECT_EQ(summary["kept"], 2) << "gemm_a's and mha_held's compile errors at turn 1";
  std::string text = read_file(seeds);
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  ordered_json first = ordered_json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(first["definition"], "gemm_a");
  EXPECT_EQ(first["status"], "COMPILE_ERROR");
  EXPECT_EQ(first["origin"]["run"], s.run);
  EXPECT_EQ(first["origin"]["turn"], 1);

  // "-": the seeds on stdout, the summary on stderr; only the named definitions.
  ProcessResult out = run_cli({"data", "seeds", "--from", s.run, "--store", s.store, "--out", "-", "--definitions", "gemm_a"});
  ASSERT_EQ(out.status.exit_code, 0) << describe(out);
  EXPECT_EQ(std::count(out.out.text.begin(), out.out.text.end(), '\n'), 1);
  EXPECT_TRUE(contains(out.err.text, "1 seeds from 1 failed turns")) << out.err.text;

  ProcessResult unknown = run_cli({"data", "seeds", "--from", "no-such-run", "--store", s.store, "--out", "-"});
  EXPECT_EQ(unknown.status.exit_code, 2) << describe(unknown);
  EXPECT_TRUE(contains(unknown.err.text, "no run 'no-such-run'")) << unknown.err.text;
  ProcessResult bad_label = run_cli({"data", "seeds", "--from", s.run, "--store", s.store, "--out", "-", "--labels", "nope"});
  EXPECT_EQ(bad_label.status.exit_code, 2) << describe(bad_label);
}

// The command line's conventions, on the built `ptxbench` binary run as a child process: exit
// codes of usage errors, --help and --version; --json output that parses; docs/cli.md equal to
// every command's --help (scripts/cli_docs.sh regenerates it).
#include <gtest/gtest.h>

#include <sstream>

#include "runs/run_store.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "common/subprocess.h"
#include "service/local_service.h"

using namespace ptxbench;

namespace {

fs::path ptxbench_binary() { return executable_dir() / "ptxbench"; }

ProcessResult ptxbench(const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {ptxbench_binary().string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_overrides = {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR};
  return run_process(spec, 120);
}

std::string describe(const std::vector<std::string>& args, const ProcessResult& r) {
  std::string cmd = "ptxbench";
  for (const auto& a : args) cmd += " " + a;
  return cmd + " -> " + r.status.describe() + "\nstdout:\n" + r.out.text + "\nstderr:\n" + r.err.text;
}

/// Runs `ptxbench ARGS...`, expects exit code `code`, returns the result.
ProcessResult expect_exit(const std::vector<std::string>& args, int code) {
  ProcessResult r = ptxbench(args);
  EXPECT_EQ(r.status.signal, 0) << describe(args, r);
  EXPECT_EQ(r.status.exit_code, code) << describe(args, r);
  return r;
}

/// Parses stdout as one JSON document.
ordered_json json_document(const std::vector<std::string>& args) {
  ProcessResult r = expect_exit(args, 0);
  try {
    return ordered_json::parse(r.out.text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not one JSON document: " << e.what() << "\n" << describe(args, r);
    return {};
  }
}

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

/// The names listed under "Subcommands:" in a --help text.
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:") {
      inside = true;
    } else if (line.empty()) {
      inside = false;
    } else if (inside && line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return names;
}

struct CommandHelp {
  std::string path;  ///< "ptxbench suite load"
  std::string help;
};

/// Every command and subcommand, depth first in the order the helps list them.
void collect_helps(std::vector<std::string> args, std::vector<CommandHelp>& out) {
  std::vector<std::string> help_args = args;
  help_args.push_back("--help");
  ProcessResult r = expect_exit(help_args, 0);
  std::string path = "ptxbench";
  for (const auto& a : args) path += " " + a;
  out.push_back({path, r.out.text});
  for (const auto& sub : subcommands_in(r.out.text)) {
    std::vector<std::string> next = args;
    next.push_back(sub);
    collect_helps(next, out);
  }
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(ptxbench_binary())) << ptxbench_binary() << " missing: build the ptxbench target";
  }
};

}  // namespace

TEST_F(Cli, HelpAndVersionExitZeroOnStdout) {
  ProcessResult help = expect_exit({"--help"}, 0);
  EXPECT_TRUE(contains(help.out.text, "Usage: ptxbench")) << help.out.text;
  EXPECT_TRUE(contains(help.out.text, "Exit codes:")) << help.out.text;
  EXPECT_EQ(help.err.text, "");
  ProcessResult sub = expect_exit({"suite", "load", "--help"}, 0);
  EXPECT_TRUE(contains(sub.out.text, "Usage: ptxbench suite load")) << sub.out.text;

  ProcessResult version = expect_exit({"--version"}, 0);
  EXPECT_EQ(version.out.text.rfind(std::string("ptxbench ") + PTXBENCH_VERSION + " (commit ", 0), 0u) << version.out.text;
  EXPECT_TRUE(contains(version.out.text, ")\n")) << version.out.text;
  EXPECT_EQ(version.err.text, "");
}

TEST_F(Cli, UsageErrorsExitTwoWithAClearMessage) {
  // Bare: the top-level help, on stderr (stdout stays for results).
  ProcessResult bare = expect_exit({}, 2);
  EXPECT_EQ(bare.out.text, "");
  EXPECT_TRUE(contains(bare.err.text, "Usage: ptxbench")) << bare.err.text;
  ProcessResult group = expect_exit({"suite"}, 2);
  EXPECT_TRUE(contains(group.err.text, "'ptxbench suite' needs a command (run, load, materialize)")) << group.err.text;
  EXPECT_TRUE(contains(group.err.text, "Usage: ptxbench suite")) << group.err.text;

  ProcessResult command = expect_exit({"frobnicate"}, 2);
  EXPECT_TRUE(contains(command.err.text, "unknown command 'frobnicate'")) << command.err.text;
  ProcessResult subcommand = expect_exit({"definitions", "frobnicate"}, 2);
  EXPECT_TRUE(contains(subcommand.err.text, "unknown command 'frobnicate' for 'ptxbench definitions'")) << subcommand.err.text;

  ProcessResult flag = expect_exit({"--no-such-flag"}, 2);
  EXPECT_TRUE(contains(flag.err.text, "unknown option '--no-such-flag' for 'ptxbench'")) << flag.err.text;
  ProcessResult sub_flag = expect_exit({"definitions", "list", "--no-such-flag"}, 2);
  EXPECT_TRUE(contains(sub_flag.err.text, "--no-such-flag")) << sub_flag.err.text;
  EXPECT_TRUE(contains(sub_flag.err.text, "ptxbench definitions list --help")) << sub_flag.err.text;

  expect_exit({"eval", "gemm_n7168_k5120", "--trials", "three"}, 2);  // bad value
  expect_exit({"definitions", "show"}, 2);                             // missing argument
  expect_exit({"definitions", "show", "no_such_definition"}, 2);       // bad input
}

TEST_F(Cli, JsonOutputsParse) {
  ordered_json list = json_document({"definitions", "list", "--json"});
  ASSERT_TRUE(list.is_array());
  ASSERT_FALSE(list.empty());
  std::string name = list[0]["name"].get<std::string>();

  ordered_json show = json_document({"definitions", "show", name, "--json"});
  EXPECT_EQ(show["definition"]["name"], name);
  ASSERT_TRUE(show["workloads"].is_array());
  ASSERT_FALSE(show["workloads"].empty());
  int defaults = 0;
  for (const auto& w : show["workloads"]) defaults += w["default"].get<bool>() ? 1 : 0;
  EXPECT_EQ(defaults, 1);

  ordered_json tags = json_document({"prompt", "--list-tags", "--json"});
  EXPECT_FALSE(tags["tags"].empty());
  EXPECT_FALSE(tags["default_tags"].empty());

  TempDir dir("ptxbench-cli");
  fs::path store = dir.path() / "runs.db";
  std::string id;
  {
    RunStore s(store.string());
    id = s.create_run(ordered_json{{"model", "expert"}}, "expert", "a test run");
  }
  ordered_json runs = json_document({"run", "--list", "--json", "--store", store.string()});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["id"], id);
  EXPECT_EQ(runs[0]["model"], "expert");
  expect_exit({"run", "--export", id, "--json", "--store", store.string()}, 2);  // --json goes with --list

  fs::path suite = dir.path() / "suite.json";
  write_file_atomic(dir.path() / "fast.cu", "// PTXB_FAKE_SECONDS=0.01\n");
  write_file_atomic(suite, R"({"definition": "gemm_n7168_k5120", "cases": [
      {"name": "fast", "file": "fast.cu", "expect": {"status": "PASSED"}}]})");
  ordered_json written = json_document({"suite", "materialize", suite.string(), (dir.path() / "cases").string(), "--json"});
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0]["name"], "fast");
  EXPECT_TRUE(fs::exists(written[0]["file"].get<std::string>()));

  LocalService service(ptxbench_binary(), dir.path() / "queue.db", {"--fake-gpus", "1"}, "127.0.0.1:0",
                       {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR}, 15);
  ordered_json summary = json_document({"suite", "load", suite.string(), "--service", service.url(), "--count", "2",
                                        "--clients", "1", "--json"});
  EXPECT_EQ(summary["submissions"], 2);
  EXPECT_EQ(summary["as_expected"], 2);
}

// docs/cli.md is every command's --help: each appears there exactly, under its own heading, and
// no heading names a command the binary does not have. Fix: scripts/cli_docs.sh BUILD_DIR.
TEST_F(Cli, DocsAreTheHelpOfEveryCommand) {
  std::vector<CommandHelp> helps;
  collect_helps({}, helps);
  ASSERT_GT(helps.size(), 8u);
  std::string docs = read_file(fs::path(PTXBENCH_SOURCE_DIR) / "docs" / "cli.md");
  const std::string fix = "; run scripts/cli_docs.sh " + std::string(PTXBENCH_BUILD_DIR);
  std::vector<std::string> expected_headings;
  for (const auto& h : helps) {
    std::string block = "## " + h.path + "\n\n```text\n" + h.help + "```\n";
    EXPECT_TRUE(contains(docs, block)) << "docs/cli.md lacks the --help of `" << h.path << "`" << fix;
    expected_headings.push_back(h.path);
  }
  std::vector<std::string> headings;
  std::istringstream in(docs);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("## ", 0) == 0) headings.push_back(line.substr(3));
  EXPECT_EQ(headings, expected_headings) << "docs/cli.md's command headings differ from the binary's commands" << fix;
}

// Triton suites (docs/triton.md): `suite materialize` writes their cases as .py files (`suite load`
// submits them with their language: ServiceTest.LoadSendsEachCasesLanguage).
TEST_F(Cli, TritonSuitesMaterializeAsPython) {
  TempDir dir("cli-triton");
  const std::string suite = std::string(PTXBENCH_TEST_DATA) + "/fixtures/triton/suite.json";
  ordered_json written = json_document({"suite", "materialize", suite, (dir.path() / "cases").string(), "--json"});
  ASSERT_GE(written.size(), 10u);
  for (const auto& w : written) EXPECT_EQ(fs::path(w["file"].get<std::string>()).extension(), ".py") << w.dump();
}

// `compile FILE.py --definition D` says why it ran no build pass where it cannot (no Triton, no
// GPU: the GPU test TritonVerdicts.TheBuildPassAloneCompilesTheKernelsForTheGpu builds); a failed
// static check runs none either way.
TEST_F(Cli, TritonCompileSaysWhyNoBuildPassRan) {
  const std::string dir = std::string(PTXBENCH_TEST_DATA) + "/fixtures/triton/";
  ordered_json ok = json_document({"compile", dir + "gemm_tl_dot.py", "--definition", "gemm_n7168_k5120", "--json"});
  EXPECT_EQ(ok["status"], "ok") << ok.dump(2);
  ASSERT_TRUE(ok.contains("triton_build")) << ok.dump(2);
  if (!ok["triton_build"]["built"].get<bool>()) {
    EXPECT_FALSE(ok["triton_build"]["skipped"].get<std::string>().empty()) << ok.dump(2);
  } else {
    EXPECT_GT(ok["triton_build"]["static_sass"]["counts"]["gmma"].get<int>(), 0) << ok.dump(2);
  }
  ProcessResult banned = expect_exit({"compile", dir + "gemm_torch_matmul.py", "--definition", "gemm_n7168_k5120", "--json"}, 1);
  ordered_json b = ordered_json::parse(banned.out.text);
  EXPECT_EQ(b["status"], "banned_api");
  EXPECT_EQ(b["triton_build"]["skipped"], "the static checks failed");
  ProcessResult cuda = expect_exit({"compile", std::string(PTXBENCH_SOURCE_DIR) + "/knowledge/hopper/experts/gemm_n7168_k5120.cu",
                                    "--workload", "M=256"}, 2);
  EXPECT_TRUE(contains(cuda.err.text, "apply to Triton")) << cuda.err.text;
}

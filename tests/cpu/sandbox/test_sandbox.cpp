// The sandbox of processes that run candidate code (src/sandbox/): namespaces, the filesystem
// view, the unprivileged identity, the clean environment, the memory cgroup, and what a hostile
// child can and cannot reach. The hostile acts are done by tests/helpers/sandbox_probe.cpp.
// Without the permission to build a sandbox (not root, no user namespaces) the tests skip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <csignal>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "compile/compiler.h"
#include "sandbox/cgroup.h"
#include "sandbox/host_paths.h"
#include "sandbox/sandbox.h"

using namespace ptxbench;

namespace {

const fs::path kProbe = fs::path(PTXBENCH_BUILD_DIR) / "bin" / "ptxbench-sandbox-probe";

struct Sandboxed {
  std::shared_ptr<Sandbox> sandbox;
  ProcessResult result;
};

SandboxPolicy test_policy(const fs::path& scratch) {
  SandboxPolicy p;
  p.enforcement = Enforcement::required;
  p.read_only = system_paths();
  p.read_only.push_back(kProbe.parent_path().string());
  p.writable = {scratch.string()};
  return p;
}

// Runs argv in the sandbox of `policy` (required: an error where the host cannot build it).
Sandboxed run_sandboxed(const std::vector<std::string>& argv, const SandboxPolicy& policy, const fs::path& cwd,
                        std::vector<std::string> env = {}) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = cwd.string();
  spec.env_overrides = std::move(env);
  Sandboxed s;
  s.sandbox = std::make_shared<Sandbox>(policy, cwd.string());
  spec.setup = s.sandbox;
  s.result = run_process(spec, 60);
  return s;
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "these tests build the root sandbox (an unprivileged user, namespaces)";
    ASSERT_TRUE(fs::exists(kProbe)) << kProbe;
  }
  // Not under /tmp, which the view replaces with a private tmpfs.
  TempDir m_scratch{"sandbox-test", cache_root() / "test-scratch"};
};

}  // namespace

TEST_F(SandboxTest, RunsAsNobodyAloneInItsOwnPidNamespace) {
  auto s = run_sandboxed({kProbe.string(), "whoami"}, test_policy(m_scratch.path()), m_scratch.path());
  ASSERT_TRUE(s.result.status.success()) << s.result.err.text;
  EXPECT_EQ(line_starting(s.result.out.text, "uid "), "uid 65534");
  EXPECT_EQ(line_starting(s.result.out.text, "pid "), "pid 1") << "the first process of a new PID namespace";
  EXPECT_EQ(line_starting(s.result.out.text, "ppid "), "ppid 0") << "its parent (the worker) is outside it";
  EXPECT_EQ(line_starting(s.result.out.text, "procs:"), "procs: 1") << "it sees no other process";
  // The root holds the system folders and the ways to the scratch folder and to the probe's own
  // folder (given read-only), nothing else of the host.
  std::string root = line_starting(s.result.out.text, "root:") + " ";
  auto top = [](const fs::path& p) { return " " + (*++p.begin()).string() + " "; };
  for (const char* hidden : {" root ", " home ", " work ", " var ", " srv ", " etc ", " mnt "})
    if (hidden != top(m_scratch.path()) && hidden != top(kProbe))
      EXPECT_EQ(root.find(hidden), std::string::npos) << hidden << "is visible: " << root;
  EXPECT_TRUE(s.sandbox->report().namespaces && s.sandbox->report().filesystem_view && s.sandbox->report().unprivileged);
}

TEST_F(SandboxTest, TheViewIsReadOnlyButForScratchAndAPrivateTmp) {
  // A host file outside the view (in the cache folder, beside the scratch folder).
  fs::path secret = m_scratch.path().parent_path() / ("secret-" + std::to_string(getpid()));
  write_file_atomic(secret, "reference outputs");
  auto s = run_sandboxed({"/bin/sh", "-c",
                          "touch /usr/ptxbench-x 2>/dev/null && echo usr-writable || echo usr-readonly;"
                          "touch \"$PWD/ok\" && echo scratch-writable;"
                          "touch /tmp/mine && echo tmp-writable;"
                          "cat " + secret.string() + " 2>/dev/null || echo secret-hidden;"
                          "mkdir /newdir 2>/dev/null && echo root-writable || echo root-readonly"},
                         test_policy(m_scratch.path()), m_scratch.path());
  EXPECT_EQ(s.result.out.text, "usr-readonly\nscratch-writable\ntmp-writable\nsecret-hidden\nroot-readonly\n")
      << s.result.err.text;
  EXPECT_TRUE(fs::exists(m_scratch.path() / "ok"));
  EXPECT_FALSE(fs::exists("/tmp/mine")) << "the child's /tmp must be private";
  fs::remove(secret);
}

TEST_F(SandboxTest, AScratchFolderUnderTmpStaysWritable) {
  TempDir under_tmp("sandbox-test");  // /tmp/...
  auto s = run_sandboxed({"/bin/sh", "-c", "touch \"$PWD/ok\" && echo scratch-writable"}, test_policy(under_tmp.path()),
                         under_tmp.path());
  EXPECT_EQ(s.result.out.text, "scratch-writable\n") << s.result.err.text;
  EXPECT_TRUE(fs::exists(under_tmp.path() / "ok"));
}

TEST_F(SandboxTest, HasNoNetworkAndACleanEnvironment) {
  ::setenv("PTXBENCH_TEST_SECRET", "api-key", 1);
  auto s = run_sandboxed({"/bin/sh", "-c", "grep -c : /proc/net/dev; env"}, test_policy(m_scratch.path()),
                         m_scratch.path(), {"VISIBLE=1"});
  ::unsetenv("PTXBENCH_TEST_SECRET");
  // A fresh network namespace has only the loopback device.
  EXPECT_EQ(line_starting(s.result.out.text, "1"), "1") << s.result.out.text;
  EXPECT_EQ(s.result.out.text.find("PTXBENCH_TEST_SECRET"), std::string::npos) << "our environment leaked";
  EXPECT_NE(s.result.out.text.find("VISIBLE=1"), std::string::npos);
}

// The original escape: a runner read the worker's reference outputs out of /proc/<parent>/mem.
TEST_F(SandboxTest, CannotReadItsParentsMemory) {
  static const char secret[] = "PTXBENCH-REFERENCE-OUTPUT-0123456789";
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", static_cast<const void*>(secret));
  std::string pid = std::to_string(getpid());
  // In its own PID namespace the parent has no /proc entry at all.
  auto s = run_sandboxed({kProbe.string(), "peek", pid, addr, "16"}, test_policy(m_scratch.path()), m_scratch.path());
  EXPECT_EQ(line_starting(s.result.out.text, "open mem"), "open mem: ENOENT") << s.result.out.text;
  EXPECT_EQ(s.result.out.text.find("PTXBENCH-REFERENCE"), std::string::npos);
  // Without the PID namespace (host /proc visible) the unprivileged identity still stops it.
  SandboxPolicy shared_pids = test_policy(m_scratch.path());
  shared_pids.pid_namespace = false;
  shared_pids.proc = false;
  shared_pids.read_only.push_back("/proc");
  auto t = run_sandboxed({kProbe.string(), "peek", pid, addr, "16"}, shared_pids, m_scratch.path());
  EXPECT_EQ(t.result.out.text.find("PTXBENCH-REFERENCE"), std::string::npos) << t.result.out.text;
  EXPECT_NE(line_starting(t.result.out.text, "open mem"), "open mem: ok") << t.result.out.text;
}

TEST_F(SandboxTest, AMemoryHogIsKilledInItsCgroupAndWeLive) {
  if (ProcessCgroup::available().empty()) GTEST_SKIP() << "no writable memory cgroup here";
  SandboxPolicy p = test_policy(m_scratch.path());
  p.memory_bytes = uint64_t{256} << 20;
  auto s = run_sandboxed({kProbe.string(), "hog", "1024"}, p, m_scratch.path());
  EXPECT_FALSE(s.result.status.success());
  EXPECT_EQ(s.result.status.signal, SIGKILL) << s.result.status.describe() << "\n" << s.result.out.text;
  EXPECT_TRUE(s.sandbox->out_of_memory());
  EXPECT_TRUE(s.sandbox->report().memory_limit);
  // Below the limit the same program is fine.
  auto ok = run_sandboxed({kProbe.string(), "hog", "64"}, p, m_scratch.path());
  EXPECT_TRUE(ok.result.status.success()) << ok.result.out.text << ok.result.err.text;
  EXPECT_FALSE(ok.sandbox->out_of_memory());
}

TEST_F(SandboxTest, AMissingWritableFolderIsAClearError) {
  SandboxPolicy p = test_policy(m_scratch.path());
  p.writable = {(m_scratch.path() / "missing").string()};
  try {
    Sandbox s(p, (m_scratch.path() / "missing").string());
    FAIL() << "expected an error";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

TEST(SandboxSettings, EnforcementParsesAndRejectsTypos) {
  EXPECT_EQ(parse_enforcement("required"), Enforcement::required);
  EXPECT_EQ(parse_enforcement("off"), Enforcement::off);
  EXPECT_THROW(parse_enforcement("yes"), InputError);
}

// The compile stage's sandbox: an #include of any host file outside the view finds nothing, so
// the compile log (which a model sees) cannot carry a host file's contents; the ABI and pack
// headers still resolve.
TEST_F(SandboxTest, CompileSandboxShowsNoHostFileToAnInclude) {
  Compiler compiler;
  if (compiler.nvcc_path().empty()) GTEST_SKIP() << "no nvcc here";
  fs::path secret = m_scratch.path().parent_path() / ("secret-" + std::to_string(getpid()) + ".h");
  write_file_atomic(secret, "int PTXBENCH_SECRET_TOKEN_42;\n");
  TempDir work("build", cache_root() / "test-scratch");
  write_file_atomic(work.path() / "ok.cu", "#include \"ptxbench_abi.h\"\n#include \"ptxb/sm90.cuh\"\nint x;\n");
  write_file_atomic(work.path() / "leak.cu", "#include \"" + secret.string() + "\"\n");
  auto preprocess = [&](const std::string& file) {
    ProcessSpec spec;
    spec.argv = {compiler.nvcc_path(), "-E", "-I" + (data_root() / "knowledge/abi").string(),
                 "-I" + (data_root() / "knowledge/hopper/include").string(), file};
    spec.cwd = work.path().string();
    spec.setup = std::make_shared<Sandbox>(compiler.compile_sandbox_policy(work.path()), spec.cwd);
    return run_process(spec, 120);
  };
  ProcessResult ok = preprocess("ok.cu");
  EXPECT_TRUE(ok.status.success()) << ok.err.text.substr(0, 2000);
  ProcessResult leak = preprocess("leak.cu");
  EXPECT_FALSE(leak.status.success());
  EXPECT_EQ((leak.out.text + leak.err.text).find("PTXBENCH_SECRET_TOKEN_42"), std::string::npos);
  EXPECT_NE(leak.err.text.find("No such file"), std::string::npos) << leak.err.text;
  fs::remove(secret);
}

// A sandboxed child dies with the thread that started it, although it changed its user on the way
// (which clears the parent-death signal): on the H200 a runner under compute-sanitizer outlived a
// killed service this way and kept spinning on the GPU.
TEST_F(SandboxTest, DiesWithTheThreadThatStartedItThoughItChangedItsUser) {
  ProcessSpec spec;
  spec.argv = {kProbe.string(), "sleep"};
  spec.cwd = m_scratch.path().string();
  spec.die_with_parent = true;
  auto sandbox = std::make_shared<Sandbox>(test_policy(m_scratch.path()), m_scratch.path().string());
  spec.setup = sandbox;
  std::unique_ptr<ChildProcess> child;
  std::thread([&] { child = std::make_unique<ChildProcess>(spec); }).join();
  ASSERT_TRUE(child);
  std::optional<ExitStatus> status = child->wait_for(10.0);
  ASSERT_TRUE(status.has_value()) << "the sandboxed child outlived the thread that started it";
  EXPECT_EQ(status->signal, SIGKILL) << status->describe();
  EXPECT_TRUE(sandbox->report().unprivileged) << "the child must have changed its user for this test to mean anything";
}

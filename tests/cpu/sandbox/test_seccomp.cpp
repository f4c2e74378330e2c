// The runner's system-call filter (src/sandbox/seccomp_filter.h), installed in a helper process
// that then tries what a hostile candidate would: new processes, threads, sockets, tracing,
// mounts, replacing the trap handler, a raw `syscall` instruction, exec.
#include <gtest/gtest.h>

#include <sstream>

#include "common/fs.h"
#include "common/subprocess.h"
#include "sandbox/seccomp_filter.h"

using namespace ptxbench;

namespace {

const fs::path kProbe = fs::path(PTXBENCH_BUILD_DIR) / "bin" / "ptxbench-sandbox-probe";

std::map<std::string, std::string> attempts(const std::string& profile, std::string& violations) {
  ProcessSpec spec;
  spec.argv = {kProbe.string(), "seccomp", profile};
  ProcessResult r = run_process(spec, 30);
  EXPECT_TRUE(r.status.success()) << r.status.describe() << "\n" << r.out.text << r.err.text;
  std::map<std::string, std::string> out;
  std::istringstream in(r.out.text);
  for (std::string line; std::getline(in, line);) {
    auto colon = line.find(": ");
    if (line.rfind("violations:", 0) == 0) violations = line.substr(11);
    else if (colon != std::string::npos) out[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return out;
}

}  // namespace

TEST(Seccomp, TheSessionProfileDeniesProcessesThreadsSocketsTracingAndMounts) {
  if (!seccomp_available()) GTEST_SKIP() << "no seccomp in this kernel";
  std::string violations;
  auto a = attempts("session", violations);
  for (const char* denied : {"fork", "socket", "ptrace", "mount", "unshare", "sigaction SIGSYS", "raw socket", "execve"})
    EXPECT_EQ(a[denied], "EPERM") << denied;
  EXPECT_EQ(a["thread"], "EPERM") << "the session runner may start no thread after setup";
  EXPECT_EQ(a["open /dev/null"], "ok") << "ordinary calls are untouched";
  // Each denied call is named, so a verdict can say what the candidate tried.
  for (const char* name : {"clone", "socket", "ptrace", "mount", "unshare", "rt_sigaction", "execve"})
    EXPECT_NE(violations.find(name), std::string::npos) << name << " missing from:" << violations;
}

TEST(Seccomp, TheToolProfileAllowsThreadsButNoProcesses) {
  if (!seccomp_available()) GTEST_SKIP() << "no seccomp in this kernel";
  std::string violations;
  auto a = attempts("tool_target", violations);
  EXPECT_EQ(a["thread"], "ok") << "a tool's injected agent may need threads";
  EXPECT_EQ(a["fork"], "EPERM");
  EXPECT_EQ(a["socket"], "EPERM");
}

// Denying the look (src/sandbox/process_traces.h): after the runner's restriction a candidate reads
// nothing of how its process started, nothing of its memory map and nothing of other processes,
// from the thread that was restricted and from threads it starts; CUDA's and the C library's own
// reads (status, cpuinfo, system files) still work.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "common/fs.h"
#include "common/subprocess.h"

using namespace ptxbench;

namespace {
const fs::path kProbe = fs::path(PTXBENCH_BUILD_DIR) / "bin" / "ptxbench-sandbox-probe";
}  // namespace

TEST(ProcessTraces, ACandidateSeesNoStartUpBlockNoMemoryMapAndNoOtherProcess) {
  ProcessSpec spec;
  spec.argv = {kProbe.string(), "proc-view", "--a-distinctive-argument"};
  spec.env_overrides = {"PTXB_PROBE_SECRET=NV_TOOL_INJECTION_LOOKALIKE"};
  ProcessResult r = run_process(spec, 30);
  ASSERT_TRUE(r.status.success()) << r.status.describe() << "\n" << r.out.text << r.err.text;
  std::map<std::string, std::string> seen;
  std::istringstream in(r.out.text);
  for (std::string line; std::getline(in, line);)
    if (auto colon = line.find(": "); colon != std::string::npos) seen[line.substr(0, colon)] = line.substr(colon + 2);
  EXPECT_EQ(seen["cmdline bytes"], "0") << "the command line (\"once\" under a tool) is wiped";
  EXPECT_EQ(seen["environ bytes"], "0") << "the start-up environment (a tool's variables) is wiped";
  if (seen["view"].rfind("hidden", 0) != 0) GTEST_SKIP() << "no Landlock here: " << seen["view"];
  for (const char* who : {"main", "thread"}) {
    for (const char* hidden : {"/proc/self/maps", "/proc/self/environ", "/proc/self/cmdline", "/proc/self/smaps",
                               "/proc/self/task", "/proc/1/cmdline"})
      EXPECT_EQ(seen[std::string(who) + " " + hidden], "EACCES") << who << " " << hidden;
    for (const char* open : {"/proc/self/status", "/proc/cpuinfo", "/etc/passwd"})
      EXPECT_EQ(seen[std::string(who) + " " + open], "ok") << who << " " << open;
  }
}

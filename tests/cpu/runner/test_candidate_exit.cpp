// The runner's exit interception (src/runner/candidate_exit.h): a candidate library's exit(),
// abort() and failed assert() inside a call end the runner with kRunnerCallFailedExit, reported and
// named, whatever exit code the candidate chose; outside candidate code exit() is the C library's;
// a candidate's destructor cannot change the runner's own exit status. Exercised through
// ptxbench-exit-probe, which links the interception exactly as the runner does.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/subprocess.h"
#include "runner/runner_exit.h"

using namespace ptxbench;

namespace {

const fs::path kProbe = fs::path(PTXBENCH_BUILD_DIR) / "bin" / "ptxbench-exit-probe";
const fs::path kLibrary = fs::path(PTXBENCH_BUILD_DIR) / "lib" / "libptxb_exit_probe_candidate.so";

ProcessResult probe(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  ProcessSpec spec;
  spec.argv = {kProbe.string(), kLibrary.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_overrides = env;
  return run_process(spec, 30);
}

}  // namespace

TEST(CandidateExit, ExitInACallFailsTheCallWhateverTheCode) {
  for (const char* code : {"1", "0", "12"}) {
    SCOPED_TRACE(code);
    ProcessResult r = probe({"exit", code});
    EXPECT_EQ(r.status.signal, 0);
    EXPECT_EQ(r.status.exit_code, kRunnerCallFailedExit) << r.err.text;
    EXPECT_NE(r.err.text.find(std::string("candidate: giving up with ") + code), std::string::npos);
    EXPECT_NE(r.err.text.find(std::string("the candidate called exit(") + code + ") during a call"), std::string::npos)
        << r.err.text;
    EXPECT_NE(r.out.text.find(std::string("report: aborted=0 code=") + code + " loading=0"), std::string::npos)
        << r.out.text;
    EXPECT_EQ(r.out.text.find("the call returned"), std::string::npos);
    EXPECT_EQ(r.out.text.find("atexit handler ran"), std::string::npos) << "exit handlers must not run";
  }
}

TEST(CandidateExit, AbortAndAFailedAssertAreReportedToo) {
  ProcessResult a = probe({"abort"});
  EXPECT_EQ(a.status.signal, 0);
  EXPECT_EQ(a.status.exit_code, kRunnerCallFailedExit);
  EXPECT_NE(a.err.text.find("the candidate called abort() during a call"), std::string::npos) << a.err.text;
  EXPECT_NE(a.out.text.find("report: aborted=1"), std::string::npos) << a.out.text;

  ProcessResult s = probe({"assert"});
  EXPECT_EQ(s.status.signal, 0) << "SIGABRT in candidate code ends the runner with its code";
  EXPECT_EQ(s.status.exit_code, kRunnerCallFailedExit) << s.err.text;
  EXPECT_NE(s.err.text.find("the candidate's own check"), std::string::npos) << s.err.text;
  EXPECT_NE(s.err.text.find("aborted (SIGABRT"), std::string::npos) << s.err.text;
}

TEST(CandidateExit, ExitWhileLoadingIsReportedAsLoading) {
  ProcessResult r = probe({"load"}, {"EXIT_PROBE_EXIT_ON_LOAD=7"});
  EXPECT_EQ(r.status.exit_code, kRunnerCallFailedExit) << r.err.text;
  EXPECT_NE(r.err.text.find("called exit(7) while its library was loading"), std::string::npos) << r.err.text;
  EXPECT_NE(r.out.text.find("loading=1"), std::string::npos);
  ProcessResult clean = probe({"load"});
  EXPECT_TRUE(clean.status.success()) << clean.err.text;
}

TEST(CandidateExit, OutsideCandidateCodeExitIsTheCLibrarys) {
  ProcessResult r = probe({"outside", "5"});
  EXPECT_EQ(r.status.signal, 0);
  EXPECT_EQ(r.status.exit_code, 5);
  EXPECT_NE(r.out.text.find("runner atexit handler ran"), std::string::npos) << "exit handlers run as usual";
  EXPECT_EQ(r.err.text.find("ptxbench-runner"), std::string::npos) << r.err.text;
}

TEST(CandidateExit, ADestructorCannotChangeTheRunnersStatus) {
  for (const char* code : {"0", "10"}) {
    SCOPED_TRACE(code);
    ProcessResult r = probe({"destructor", code});
    EXPECT_EQ(r.status.signal, 0);
    EXPECT_EQ(r.status.exit_code, 3) << r.err.text;
  }
}

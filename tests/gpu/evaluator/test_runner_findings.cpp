// What a candidate runner's own report means for the verdict: no GPU needed (cpu label, see
// tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <string>

#include "evaluator/stages/runner_findings.h"

using namespace ptxbench;

// Lost activity records are the candidate's doing (a flood of launches, or a forged count): its own
// TIMING_ANOMALY, never INFRA_ERROR, which would be evaluated again without charge.
TEST(RunnerFindings, LostActivityRecordsAreTheCandidatesTimingAnomaly) {
  for (const char* when : {"in the correctness calls", "in a timing trial"}) {
    Failure f = lost_activity_records(1234, when);
    EXPECT_EQ(f.status, Status::TIMING_ANOMALY) << when;
    EXPECT_NE(f.message.find("lost 1234 device activity records " + std::string(when)), std::string::npos) << f.message;
  }
}

// A runner killed, a broken protocol or a crash is the candidate's RUNTIME_ERROR; a call past its
// limit is its TIMEOUT, with the limit named.
TEST(RunnerFindings, RunnerFaultsAreTheCandidatesOwnStatus) {
  Failure timeout = runner_fault_finding(RunnerFault(RunnerFault::Kind::timeout, "no reply"), "during a correctness call", 30);
  EXPECT_EQ(timeout.status, Status::TIMEOUT);
  EXPECT_NE(timeout.message.find("30 s during a correctness call"), std::string::npos) << timeout.message;
  for (auto kind : {RunnerFault::Kind::out_of_memory, RunnerFault::Kind::protocol, RunnerFault::Kind::died}) {
    Failure f = runner_fault_finding(RunnerFault(kind, "gone"), "during a timed call", 30);
    EXPECT_EQ(f.status, Status::RUNTIME_ERROR) << f.message;
    EXPECT_NE(f.message.find("during a timed call"), std::string::npos) << f.message;
  }
}

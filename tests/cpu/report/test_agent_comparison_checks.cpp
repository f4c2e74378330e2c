// The refusals of agent_comparison_checks.h on hand-made runs, without a store: the definitions
// both runs ran (in the agent run's order, none refused naming both lists), N against each run's
// budget, the bootstrap options, and the run policy the warnings and outputs read.
#include <gtest/gtest.h>

#include <functional>

#include "common/error.h"
#include "report/agent_comparison_checks.h"

using namespace ptxbench;
using namespace ptxbench::report;

namespace {

ComparedRun run(const std::string& id, int64_t num_turns, std::vector<std::string> definitions) {
  ComparedRun r;
  r.info.id = id;
  r.num_turns = num_turns;
  r.definitions = std::move(definitions);
  return r;
}

// Whether `f` is refused with an InputError whose message holds `part` (else what happened).
::testing::AssertionResult refused_with(const std::function<void()>& f, const std::string& part) {
  try {
    f();
  } catch (const InputError& e) {
    if (std::string(e.what()).find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "refused with: " << e.what();
  }
  return ::testing::AssertionFailure() << "not refused";
}

}  // namespace

TEST(AgentComparisonChecks, SharedDefinitionsKeepTheAgentOrderAndRefuseNone) {
  ComparedRun agent = run("A", 3, {"mha", "gemm", "bwd"}), refinement = run("R", 4, {"gemm", "attn", "mha"});
  EXPECT_EQ(shared_definitions(agent, refinement), (std::vector<std::string>{"mha", "gemm"}));
  ComparedRun other = run("O", 4, {"attn"});
  EXPECT_TRUE(refused_with([&] { shared_definitions(agent, other); },
                           "share no definition (agent run A: mha, gemm, bwd; refinement run O: attn)"));
  EXPECT_TRUE(refused_with([&] { shared_definitions(run("E", 3, {}), refinement); }, "agent run E: none"));
}

TEST(AgentComparisonChecks, RequestsMustFitBothBudgets) {
  AgentComparison c;
  c.agent = run("A", 3, {"gemm"});
  c.refinement = run("R", 2, {"gemm"});
  c.requests = 2;
  EXPECT_NO_THROW(check_requests(c));
  c.requests = 3;
  EXPECT_TRUE(refused_with([&] { check_requests(c); }, "the refinement run R allows only 2"));
  EXPECT_TRUE(refused_with([&] { check_requests(c); }, "Give --requests 2 or less"));
  c.requests = 0;
  EXPECT_TRUE(refused_with([&] { check_requests(c); }, "the agent run A states no budget"));
}

TEST(AgentComparisonChecks, OptionsOutOfRangeAreRefused) {
  AgentComparisonOptions o;
  EXPECT_NO_THROW(check_comparison_options(o));
  o.requests = 0;
  EXPECT_TRUE(refused_with([&] { check_comparison_options(o); }, "--requests: N is >= 1, got 0"));
  o = {};
  o.bootstrap.resamples = 100001;
  EXPECT_TRUE(refused_with([&] { check_comparison_options(o); }, "--bootstrap: B is 1 to 100000, got 100001"));
  o = {};
  o.bootstrap.confidence = 0.0;
  EXPECT_TRUE(refused_with([&] { check_comparison_options(o); }, "--confidence: strictly between 0 and 1"));
}

TEST(AgentComparisonChecks, RunPolicyIsTheConfigsStringAndRulesHaveKeys) {
  RunInfo info;
  EXPECT_EQ(run_policy(info), "");
  info.config = {{"policy", kAgentPolicy}};
  EXPECT_EQ(run_policy(info), kAgentPolicy);
  info.config = {{"policy", 3}};
  EXPECT_EQ(run_policy(info), "");
  EXPECT_EQ(rule_key(InstructionRule::paper), "paper");
  EXPECT_EQ(rule_key(InstructionRule::strict), "strict");
  EXPECT_EQ(rule_key(InstructionRule::unrestricted), "unrestricted");
}

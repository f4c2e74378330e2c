// The prompt builder: ablation levels add exactly their components, tags are validated, the user
// message carries the definition and the ABI order, and token estimates behave.
#include <gtest/gtest.h>

#include "common/error.h"
#include "definitions/catalog.h"
#include "prompt/prompt_builder.h"
#include "prompt/token_estimate.h"

using namespace ptxbench;

namespace {

struct Fixture {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  PromptBuilder builder{PTXBENCH_SOURCE_DIR};
  Prompt build(const std::string& def, const std::string& tag, const std::string& arch = "sm_90a") {
    const Definition& d = catalog.definition(def);
    return builder.build(d, resolve_workload(d, catalog.default_workload(def)), tag, arch);
  }
};

std::vector<std::string> names(const Prompt& p) {
  std::vector<std::string> out;
  for (const auto& c : p.components) out.push_back(c.name);
  return out;
}

}  // namespace

TEST(TokenEstimate, CountsWordsNumbersPunctuationAndLineBreaks) {
  EXPECT_EQ(estimate_tokens(""), 0u);
  EXPECT_EQ(estimate_tokens("hello"), 1u);
  EXPECT_EQ(estimate_tokens("hello world"), 2u);
  EXPECT_EQ(estimate_tokens("mbarrier_arrive_expect_tx"), 8u);  // mbarrier(2) _ arrive _ expect _ tx
  EXPECT_EQ(estimate_tokens("8192"), 2u);
  EXPECT_EQ(estimate_tokens("a\n\nb"), 3u);
  EXPECT_EQ(estimate_tokens("        x"), 3u);
  std::string big(100000, 'a');
  EXPECT_GT(estimate_tokens(big), 10000u);  // long runs are not one token
}

TEST(PromptBuilder, AblationLevelsAddTheirComponents) {
  Fixture f;
  Prompt l1 = f.build("gemm_n7168_k5120", "params");
  Prompt l2 = f.build("gemm_n7168_k5120", "templates");
  Prompt l3 = f.build("gemm_n7168_k5120", "contract");
  EXPECT_EQ(names(l1), (std::vector<std::string>{"rules", "abi", "params", "task"}));
  EXPECT_EQ(names(l2), (std::vector<std::string>{"rules", "abi", "params", "templates", "task"}));
  EXPECT_EQ(names(l3), (std::vector<std::string>{"rules", "abi", "params", "templates", "contract", "task"}));
  EXPECT_EQ(l1.system.find("wgmma_m64k16_bf16"), std::string::npos);
  EXPECT_NE(l2.system.find("wgmma_m64k16_bf16"), std::string::npos);
  EXPECT_NE(l2.system.find("#include \"ptxb/sm90.cuh\""), std::string::npos);
  EXPECT_EQ(l2.system.find("Hopper (sm_90a) contract"), std::string::npos);
  EXPECT_NE(l3.system.find("Hopper (sm_90a) contract"), std::string::npos);
  EXPECT_LT(l1.total_tokens(), l2.total_tokens());
  EXPECT_LT(l2.total_tokens(), l3.total_tokens());
  for (const auto& c : l3.components) EXPECT_GT(c.tokens, 0u) << c.name;
}

TEST(PromptBuilder, SystemHasRulesAbiAndTargetUserHasDefinitionAndOrder) {
  Fixture f;
  Prompt p = f.build("mha_bwd_d128", "params");
  EXPECT_NE(p.system.find("H200 (sm_90a)"), std::string::npos);
  EXPECT_NE(p.system.find("cuDNN fused attention backward"), std::string::npos);
  EXPECT_NE(p.system.find("PTXB_EXPORT int ptxb_run"), std::string::npos);
  EXPECT_EQ(p.system.find("{gpu}"), std::string::npos);
  EXPECT_NE(p.user.find("\"name\": \"mha_bwd_d128\""), std::string::npos);
  EXPECT_NE(p.user.find("Q, K, V, O, dO, LSE, dQ, dK, dV"), std::string::npos);
  EXPECT_NE(p.user.find("output dQ [4, 48, 4096, 128] bfloat16"), std::string::npos);
  EXPECT_EQ(p.user, p.components.back().text);
}

TEST(PromptBuilder, PatternsFollowTheOpTypeAndExpertsExistOnlyWhereWritten) {
  Fixture f;
  Prompt gemm = f.build("gemm_n7168_k5120", "full");
  Prompt fwd = f.build("mha_with_lse_d128_causal", "full");
  EXPECT_NE(gemm.components[5].source.find("warp_specialization"), std::string::npos);
  EXPECT_EQ(gemm.components[5].source.find("fa3_forward"), std::string::npos);
  EXPECT_NE(fwd.components[5].source.find("fa3_forward"), std::string::npos);
  Prompt expert = f.build("gemm_n7168_k5120", "expert");
  EXPECT_NE(expert.system.find("expert_gemm"), std::string::npos);
  EXPECT_THROW(f.build("mha_bwd_d128", "expert"), InputError);
}

TEST(PromptBuilder, TagsAreValidatedAndComposable) {
  Fixture f;
  EXPECT_EQ(names(f.build("gemm_n7168_k5120", "params+contract")),
            (std::vector<std::string>{"rules", "abi", "params", "contract", "task"}));
  EXPECT_THROW(f.build("gemm_n7168_k5120", "everything"), InputError);
  EXPECT_THROW(f.build("gemm_n7168_k5120", "params+nonsense"), InputError);
  EXPECT_THROW(f.build("gemm_n7168_k5120", "params", "sm_80"), InputError);
  EXPECT_EQ(f.builder.default_tags(), (std::vector<std::string>{"params", "templates", "contract"}));
}

TEST(PromptBuilder, BlackwellPackIsSelectedBySm100a) {
  Fixture f;
  Prompt p = f.build("gemm_n7168_k5120", "contract", "sm_100a");
  EXPECT_NE(p.system.find("B200 (sm_100a)"), std::string::npos);
  EXPECT_NE(p.system.find("tcgen05"), std::string::npos);
  EXPECT_NE(p.system.find("#include \"ptxb/sm100.cuh\""), std::string::npos);
}

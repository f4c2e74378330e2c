// The prompt builder: ablation levels add exactly their components, tags are validated, the user
// message carries the definition and the ABI order, token estimates behave, and the paper's prompt
// protocol (one hint per variant, the attention guidance, GPU targets) holds.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.h"
#include "definitions/catalog.h"
#include "prompt/bpe_tokenizer.h"
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

// The paper's protocol (docs/prompts.md): per definition three variants on the contract base, each
// hinted variant carrying exactly one pattern, plus the attention guidance; targets pick the GPU.
namespace {

const char* kEvaluationDefinitions[] = {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal",
                                        "mha_bwd_d128", "mha_bwd_d128_causal"};

std::vector<const PromptComponent*> starting_with(const Prompt& p, const std::string& prefix) {
  std::vector<const PromptComponent*> out;
  for (const auto& c : p.components)
    if (c.name.rfind(prefix, 0) == 0) out.push_back(&c);
  return out;
}

bool is_attention(const std::string& def) { return def.rfind("mha_", 0) == 0; }

}  // namespace

TEST(PaperProtocol, EachVariantCarriesAtMostOnePatternOnTheContractBase) {
  Fixture f;
  for (const char* def : kEvaluationDefinitions) {
    SCOPED_TRACE(def);
    Prompt none = f.build(def, "paper-none"), a = f.build(def, "paper-a"), b = f.build(def, "paper-b");
    EXPECT_TRUE(starting_with(none, "pattern").empty());
    ASSERT_EQ(starting_with(a, "pattern").size(), 1u);
    ASSERT_EQ(starting_with(b, "pattern").size(), 1u);
    EXPECT_EQ(starting_with(a, "pattern")[0]->name, "pattern_a");
    EXPECT_EQ(starting_with(b, "pattern")[0]->name, "pattern_b");
    EXPECT_NE(starting_with(a, "pattern")[0]->text, starting_with(b, "pattern")[0]->text);
    std::vector<std::string> base = {"rules", "abi", "params", "templates", "contract"};
    std::vector<std::string> tail = is_attention(def) ? std::vector<std::string>{"guidance", "task"}
                                                      : std::vector<std::string>{"task"};
    auto expect_names = [&](const Prompt& p, std::vector<std::string> middle) {
      std::vector<std::string> want = base;
      want.insert(want.end(), middle.begin(), middle.end());
      want.insert(want.end(), tail.begin(), tail.end());
      EXPECT_EQ(names(p), want) << p.tag;
    };
    expect_names(none, {});
    expect_names(a, {"pattern_a"});
    expect_names(b, {"pattern_b"});
    EXPECT_LT(none.total_tokens(), a.total_tokens());
  }
}

TEST(PaperProtocol, HintsMirrorTheOriginalsVariants) {
  Fixture f;
  auto hint = [&](const char* def, const char* tag) { return starting_with(f.build(def, tag), "pattern")[0]->source; };
  // GEMM: cluster multicast, warp specialisation.
  EXPECT_EQ(hint("gemm_n7168_k5120", "paper-a"), "knowledge/hopper/patterns/cluster_multicast.md");
  EXPECT_EQ(hint("gemm_n7168_k5120", "paper-b"), "knowledge/hopper/patterns/warp_specialization.md");
  // Forward: warp-specialised FA3 with ping-pong; B adds intra-warpgroup pipelining on top of it.
  for (const char* def : {"mha_with_lse_d128", "mha_with_lse_d128_causal"}) {
    EXPECT_EQ(hint(def, "paper-a"), "knowledge/hopper/patterns/fa3_forward.md");
    EXPECT_EQ(hint(def, "paper-b"),
              "knowledge/hopper/patterns/fa3_forward.md, knowledge/hopper/patterns/fa3_forward_pipelining.md");
  }
  // Backward: the two-kernel split; B puts the forward in front of it.
  for (const char* def : {"mha_bwd_d128", "mha_bwd_d128_causal"}) {
    EXPECT_EQ(hint(def, "paper-a"), "knowledge/hopper/patterns/fa3_backward_two_kernel.md");
    EXPECT_EQ(hint(def, "paper-b"),
              "knowledge/hopper/patterns/fa3_forward.md, knowledge/hopper/patterns/fa3_backward_two_kernel.md");
  }
}

TEST(PaperProtocol, GuidanceOnlyForAttentionAndOnlyWhenAsked) {
  Fixture f;
  const std::string title = "# Expert guidance for attention kernels";
  for (const char* def : kEvaluationDefinitions) {
    SCOPED_TRACE(def);
    Prompt contract = f.build(def, "contract");
    Prompt guided = f.build(def, "params+templates+contract+guidance");  // a part that names a component is it
    Prompt none = f.build(def, "paper-none");
    EXPECT_TRUE(starting_with(contract, "guidance").empty());
    EXPECT_EQ(contract.system.find(title), std::string::npos);
    EXPECT_EQ(none.system, guided.system);  // paper-none is the contract level plus the guidance
    if (is_attention(def)) {
      ASSERT_EQ(starting_with(guided, "guidance").size(), 1u);
      const PromptComponent& g = *starting_with(guided, "guidance")[0];
      EXPECT_EQ(g.source, "knowledge/hopper/patterns/mha_expert_guidance.md");
      EXPECT_EQ(guided.system, contract.system + "\n" + g.text);  // appended last, nothing else changes
      EXPECT_NE(guided.system.find(title), std::string::npos);
    } else {
      EXPECT_EQ(guided.system, contract.system);  // GEMM: the switch is a no-op
      EXPECT_EQ(names(guided), names(contract));
    }
  }
  EXPECT_EQ(f.build("gemm_n7168_k5120", "full+guidance").system, f.build("gemm_n7168_k5120", "full").system);
}

TEST(PaperProtocol, TagsAndComponentsCompose) {
  Fixture f;
  EXPECT_EQ(names(f.build("gemm_n7168_k5120", "paper-a+expert")),
            (std::vector<std::string>{"rules", "abi", "params", "templates", "contract", "pattern_a", "expert", "task"}));
  EXPECT_EQ(names(f.build("mha_bwd_d128", "params+pattern_b")),
            (std::vector<std::string>{"rules", "abi", "params", "pattern_b", "task"}));
  EXPECT_THROW(f.build("gemm_n7168_k5120", "paper-c"), InputError);
  EXPECT_THROW(f.build("gemm_n7168_k5120", "paper-a+nonsense"), InputError);
  // The Blackwell pack names no paper hints: asking for one is an error, the no-hint variant is not.
  EXPECT_THROW(f.build("gemm_n7168_k5120", "paper-a", "sm_100a"), InputError);
  EXPECT_NO_THROW(f.build("mha_with_lse_d128", "paper-none", "sm_100a"));
  for (const char* tag : {"paper-none", "paper-a", "paper-b"}) {
    auto tags = f.builder.tag_names();
    EXPECT_NE(std::find(tags.begin(), tags.end(), tag), tags.end()) << tag;
  }
}

TEST(PaperProtocol, TargetsPickTheGpuAndItsParameters) {
  Fixture f;
  Prompt h100 = f.build("mha_bwd_d128", "params", "h100");
  Prompt h200 = f.build("mha_bwd_d128", "params", "h200");
  Prompt sm90 = f.build("mha_bwd_d128", "params", "sm_90a");
  EXPECT_EQ(h100.arch, "sm_90a");
  EXPECT_EQ(h200.arch, "sm_90a");
  EXPECT_EQ(h100.target, "h100");
  EXPECT_EQ(h100.components[2].source, "knowledge/hopper/params/h100.json");
  EXPECT_EQ(h200.components[2].source, "knowledge/hopper/params/h200.json");
  EXPECT_NE(h100.system.find("H100 (sm_90a)"), std::string::npos);
  EXPECT_NE(h100.system.find("\"hbm_bandwidth_tb_s\": 3.35"), std::string::npos);
  EXPECT_EQ(h100.system.find("\"hbm_bandwidth_tb_s\": 4.8"), std::string::npos);
  EXPECT_NE(h100.system.find("80 GB HBM3"), std::string::npos);
  EXPECT_NE(h200.system.find("\"hbm_bandwidth_tb_s\": 4.8"), std::string::npos);
  EXPECT_EQ(h200.system.find("\"hbm_bandwidth_tb_s\": 3.35"), std::string::npos);
  EXPECT_NE(h200.system.find("141 GB HBM3e"), std::string::npos);
  // sm_90a still means the H200; only the JSON of a GPU target names it.
  EXPECT_EQ(sm90.system, h200.system);
  EXPECT_EQ(sm90.user, h200.user);
  EXPECT_FALSE(to_json(sm90).contains("target"));
  EXPECT_EQ(to_json(h100)["target"], "h100");
  EXPECT_EQ(to_json(h100)["arch"], "sm_90a");
  Prompt b200 = f.build("gemm_n7168_k5120", "contract", "b200");
  EXPECT_EQ(b200.arch, "sm_100a");
  EXPECT_EQ(b200.system, f.build("gemm_n7168_k5120", "contract", "sm_100a").system);
}

TEST(PaperProtocol, UnknownTargetIsAnInputError) {
  Fixture f;
  for (const char* target : {"a100", "H100", "hopper", ""})
    EXPECT_THROW(f.build("gemm_n7168_k5120", "params", target), InputError) << target;
  auto targets = f.builder.target_names();
  for (const char* t : {"sm_90a", "sm_100a", "h100", "h200", "b200"})
    EXPECT_NE(std::find(targets.begin(), targets.end(), t), targets.end()) << t;
}

TEST(PaperProtocol, ArchTargetsKeepTheirJsonShape) {
  Fixture f;
  ordered_json j = to_json(f.build("gemm_n7168_k5120", "full"));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"tag", "arch", "components", "total_tokens", "total_estimate", "token_counter", "system",
                                            "user"}));
}

// Token counts come from Qwen's tokenizer where scripts/install_tokenizer.sh installed it (CI does),
// else from the estimate; the estimate is always kept beside them.
TEST(PromptTokens, CountsComeFromTheInstalledTokenizerWithTheEstimateBeside) {
  Fixture f;
  Prompt p = f.build("gemm_n7168_k5120", "contract");
  const BpeTokenizer* tokenizer = default_tokenizer(PTXBENCH_SOURCE_DIR);
  if (!tokenizer) GTEST_SKIP() << "tokenizer not installed (scripts/install_tokenizer.sh)";
  EXPECT_EQ(p.token_counter, tokenizer->name());
  for (const auto& c : p.components) {
    EXPECT_EQ(c.tokens, tokenizer->count(c.text)) << c.name;
    EXPECT_EQ(c.estimate, estimate_tokens(c.text)) << c.name;
  }
  EXPECT_NE(p.total_tokens(), p.total_estimate()) << "two different counters agreeing to the token would be a coincidence";
}

// The Triton track (issue 22): triton-* tags swap the CUDA rules and ABI for knowledge/triton's,
// add the Hopper guide (or not: -noguide), and ask for a ```python block.
TEST(TritonPrompts, TagsCarryTheTritonAbiAndRulesAndNotTheCudaOnes) {
  Fixture f;
  Prompt guided = f.build("gemm_n7168_k5120", "triton-hopper");
  Prompt bare = f.build("gemm_n7168_k5120", "triton-hopper-noguide");
  EXPECT_EQ(names(guided), (std::vector<std::string>{"rules", "abi", "triton_guide", "task"}));
  EXPECT_EQ(names(bare), (std::vector<std::string>{"rules", "abi", "task"}));
  for (const Prompt* p : {&guided, &bare}) {
    SCOPED_TRACE(p->tag);
    EXPECT_EQ(p->language, CandidateLanguage::triton);
    EXPECT_EQ(to_json(*p)["language"], "triton");
    EXPECT_EQ(p->components[0].source, "knowledge/triton/rules.md");
    EXPECT_EQ(p->components[1].source, "knowledge/triton/ABI.md");
    EXPECT_NE(p->system.find("ptxbench Triton ABI"), std::string::npos);
    EXPECT_NE(p->system.find("one Python file with Triton kernels"), std::string::npos);
    EXPECT_NE(p->system.find("H200 (sm_90a)"), std::string::npos);
    EXPECT_NE(p->system.find("cuBLASLt"), std::string::npos);  // the GEMM's baseline
    EXPECT_EQ(p->system.find("{gpu}"), std::string::npos);
    EXPECT_EQ(p->system.find("{baseline}"), std::string::npos);
    // Nothing of the CUDA prompt: its rules, its ABI header, its templates.
    EXPECT_EQ(p->system.find("PTXB_EXPORT"), std::string::npos);
    EXPECT_EQ(p->system.find("ptxbench_abi.h"), std::string::npos);
    EXPECT_EQ(p->system.find("One self-contained `.cu` file"), std::string::npos);
    EXPECT_EQ(p->system.find("```cuda"), std::string::npos);
    EXPECT_NE(p->user.find("Arguments of run, in order: A, B, C."), std::string::npos);
    EXPECT_NE(p->user.find("```python code block"), std::string::npos);
    EXPECT_EQ(p->user.find("ptxb_run"), std::string::npos);
  }
  EXPECT_NE(guided.system.find("Triton on Hopper (sm_90a)"), std::string::npos);
  EXPECT_EQ(bare.system.find("Triton on Hopper (sm_90a)"), std::string::npos);
  EXPECT_EQ(guided.components[2].source, "knowledge/triton/hopper.md");

  // And the CUDA prompt has none of the Triton text.
  Prompt cuda = f.build("gemm_n7168_k5120", "contract");
  EXPECT_EQ(cuda.language, CandidateLanguage::cuda);
  EXPECT_FALSE(to_json(cuda).contains("language")) << "CUDA prompts keep their JSON shape";
  EXPECT_EQ(cuda.system.find("ptxbench Triton ABI"), std::string::npos);
  EXPECT_EQ(cuda.system.find("@triton.jit"), std::string::npos);
  EXPECT_NE(cuda.user.find("```cuda code block"), std::string::npos);

  Prompt attn = f.build("mha_bwd_d128", "triton-hopper");
  EXPECT_NE(attn.user.find("Arguments of run, in order: Q, K, V, O, dO, LSE, dQ, dK, dV."), std::string::npos);
  EXPECT_NE(attn.system.find("cuDNN fused attention backward"), std::string::npos);
}

TEST(TritonPrompts, LanguageOfATagAndWhatMixesAreRefused) {
  Fixture f;
  EXPECT_EQ(prompt_tag_language("triton-hopper"), CandidateLanguage::triton);
  EXPECT_EQ(prompt_tag_language("triton-hopper-noguide"), CandidateLanguage::triton);
  EXPECT_EQ(prompt_tag_language("triton-hopper+repair"), CandidateLanguage::triton);
  EXPECT_EQ(prompt_tag_language("params+triton"), CandidateLanguage::triton);
  EXPECT_EQ(prompt_tag_language("paper-a"), CandidateLanguage::cuda);
  EXPECT_EQ(prompt_tag_language("params+contract"), CandidateLanguage::cuda);
  // The architecture parameters go with either language.
  EXPECT_EQ(names(f.build("gemm_n7168_k5120", "triton-hopper+params")),
            (std::vector<std::string>{"rules", "abi", "params", "triton_guide", "task"}));
  // CUDA-only knowledge does not.
  for (const char* tag : {"triton-hopper+templates", "triton-hopper+contract", "triton-hopper-noguide+expert", "triton+paper-a"}) {
    SCOPED_TRACE(tag);
    try {
      (void)f.build("gemm_n7168_k5120", tag);
      ADD_FAILURE() << "built";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("CUDA-PTX"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(f.build("gemm_n7168_k5120", "params+triton_guide"), InputError);  // a guide without the Triton ABI
  EXPECT_THROW(f.build("gemm_n7168_k5120", "triton-hopper", "sm_100a"), InputError);  // no Blackwell guide yet
  Prompt b200 = f.build("gemm_n7168_k5120", "triton-hopper-noguide", "b200");
  EXPECT_NE(b200.system.find("B200 (sm_100a)"), std::string::npos);
  auto tags = f.builder.tag_names();
  EXPECT_NE(std::find(tags.begin(), tags.end(), "triton-hopper"), tags.end());
  EXPECT_NE(std::find(tags.begin(), tags.end(), "triton-hopper-noguide"), tags.end());
}

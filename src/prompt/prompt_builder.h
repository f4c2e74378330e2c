// The prompt builder (docs/design.md §5): a tag selects knowledge components (architecture parameters, PTX
// templates, the contract, patterns or one paper hint, the expert kernel, the attention guidance); the
// system message holds the rules, the ABI and the selected components; the user message holds the
// definition and its workload. A target (an arch or a GPU) picks the knowledge pack and its parameters.
// Triton tags (`triton-*`, docs/triton.md) swap the CUDA rules and ABI for the Triton ones
// (knowledge/triton/) and ask for a ```python block.
#pragma once

#include <string>
#include <vector>

#include "common/fs.h"
#include "common/json_check.h"
#include "compile/triton_check.h"
#include "definitions/definition.h"
#include "definitions/workload.h"

namespace ptxbench {

struct PromptComponent {
  std::string name;    ///< rules, abi, params, templates, contract, patterns, pattern_a, pattern_b, expert, guidance,
                       ///< triton_guide, task
  std::string source;  ///< files it came from
  std::string text;
  std::size_t tokens = 0;    ///< Qwen's tokenizer's count where installed (Prompt::token_counter), else estimate
  std::size_t estimate = 0;  ///< estimate_tokens(text), always (docs/prompts.md compares the two)
};

struct Prompt {
  std::string tag;
  std::string arch;    ///< sm_90a, sm_100a: what the candidate is compiled for
  std::string target;  ///< the target asked for: an arch (its pack's default GPU) or a GPU (h100, h200, b200)
  CandidateLanguage language = CandidateLanguage::cuda;  ///< what the model is asked to write (prompt_tag_language)
  std::string system;
  std::string user;
  std::vector<PromptComponent> components;  ///< in the order they appear (system, then "task")
  std::string token_counter;  ///< the tokenizer's name (BpeTokenizer::name), or "estimate" where none is installed
  [[nodiscard]] std::size_t total_tokens() const;
  [[nodiscard]] std::size_t total_estimate() const;
};

/// `target` appears only when it names a GPU (differs from `arch`), so arch-only output is unchanged;
/// `language` only for a Triton prompt ("triton"), so a CUDA prompt's JSON is unchanged too.
ordered_json to_json(const Prompt& p);

/// The language a prompt tag asks for: Triton when any of its '+'-joined parts starts with
/// "triton" (the tags triton-hopper, triton-hopper-noguide; the components triton, triton_guide),
/// else CUDA. A suffix such as "+repair" does not change it. The run config derives its language
/// from this; PromptBuilder checks that tags.json agrees (a "triton*" tag has the triton component).
CandidateLanguage prompt_tag_language(const std::string& tag);

class PromptBuilder {
 public:
  /// Reads knowledge/prompts/tags.json under `root`; InputError when malformed.
  explicit PromptBuilder(fs::path root);
  /// Throws InputError for an unknown tag, component or target, and for a pattern_a/pattern_b the
  /// pack does not define for the definition's op_type. A tag is a name from tags.json or components
  /// and tag names joined by '+' ("params+contract", "paper-a+expert"); a part that names a component
  /// means that component alone (params, templates, contract, expert). A Triton tag (component
  /// `triton`) takes knowledge/triton/rules.md and ABI.md in place of the CUDA rules and ABI, may add
  /// `params` and `triton_guide` (knowledge/triton/<pack>.md; InputError where the pack has none),
  /// and refuses the CUDA-only components (templates, contract, patterns, hints, expert, guidance).
  /// `target` is a key of
  /// tags.json "targets": an arch (sm_90a → the H200 parameters, sm_100a → B200) or a GPU (h100,
  /// h200, b200), which also picks that GPU's parameters; the prompt's arch is the target's arch.
  [[nodiscard]] Prompt build(const Definition& def, const ResolvedWorkload& workload, const std::string& tag,
                             const std::string& target = "sm_90a") const;
  [[nodiscard]] std::vector<std::string> tag_names() const;
  [[nodiscard]] std::vector<std::string> default_tags() const;
  /// The keys of tags.json "targets", in file order (sm_90a, sm_100a, h100, h200, b200).
  [[nodiscard]] std::vector<std::string> target_names() const;

 private:
  [[nodiscard]] std::vector<std::string> components_of(const std::string& tag) const;
  fs::path m_root;
  ordered_json m_config;
};

}  // namespace ptxbench

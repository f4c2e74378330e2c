// The prompt builder (DESIGN §5): a tag selects knowledge components (architecture parameters, PTX
// templates, the contract, patterns, the expert kernel); the system message holds the rules, the ABI
// and the selected components; the user message holds the definition and its workload.
#pragma once

#include <string>
#include <vector>

#include "common/fs.h"
#include "common/json_check.h"
#include "definitions/definition.h"
#include "definitions/workload.h"

namespace ptxbench {

struct PromptComponent {
  std::string name;    ///< rules, abi, params, templates, contract, patterns, expert, task
  std::string source;  ///< files it came from
  std::string text;
  std::size_t tokens = 0;  ///< estimate_tokens(text)
};

struct Prompt {
  std::string tag;
  std::string arch;
  std::string system;
  std::string user;
  std::vector<PromptComponent> components;  ///< in the order they appear (system, then "task")
  [[nodiscard]] std::size_t total_tokens() const;
};

ordered_json to_json(const Prompt& p);

class PromptBuilder {
 public:
  /// Reads knowledge/prompts/tags.json under `root`; InputError when malformed.
  explicit PromptBuilder(fs::path root);
  /// Throws InputError for an unknown tag, component or architecture. A tag is a name from
  /// tags.json or components joined by '+' ("params+contract").
  [[nodiscard]] Prompt build(const Definition& def, const ResolvedWorkload& workload, const std::string& tag,
                             const std::string& arch = "sm_90a") const;
  [[nodiscard]] std::vector<std::string> tag_names() const;
  [[nodiscard]] std::vector<std::string> default_tags() const;

 private:
  [[nodiscard]] std::vector<std::string> components_of(const std::string& tag) const;
  fs::path m_root;
  ordered_json m_config;
};

}  // namespace ptxbench

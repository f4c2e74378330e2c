// `ptxbench prompt DEFINITION --tag T`: the exact system and user messages a model receives, with a
// token estimate per knowledge component.
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "definitions/catalog.h"
#include "prompt/prompt_builder.h"

namespace ptxbench::cli {

void register_prompt(CLI::App& app, Action& action) {
  static std::string definition, tag, arch = "sm_90a", workload;
  static bool json = false, tokens_only = false, list = false;
  auto* cmd = app.add_subcommand("prompt", "print the system and user messages for a definition and a prompt tag");
  cmd->add_option("definition", definition, "definition name");
  cmd->add_option("--tag", tag, "prompt tag (params, templates, contract, full, expert) or components joined by '+'");
  cmd->add_option("--arch", arch, "target: sm_90a (Hopper pack) or sm_100a (Blackwell pack)")->capture_default_str();
  cmd->add_option("--workload", workload, "workload uuid or axis values (default: the definition's default)");
  cmd->add_flag("--json", json, "print the prompt and its token counts (with --list-tags: the tags) as one JSON document");
  cmd->add_flag("--tokens", tokens_only, "print only the token count per component");
  cmd->add_flag("--list-tags", list, "list the tags and the default evaluation triplet");
  cmd->callback([&action] {
    action = [] {
      PromptBuilder builder(data_root());
      if (list && json) {
        fmt::print("{}\n", ordered_json{{"tags", builder.tag_names()}, {"default_tags", builder.default_tags()}}.dump(2));
        return 0;
      }
      if (list) {
        for (const auto& t : builder.tag_names()) fmt::print("{}\n", t);
        std::string defaults;
        for (const auto& t : builder.default_tags()) defaults += (defaults.empty() ? "" : ", ") + t;
        fmt::print("default evaluation tags: {}\n", defaults);
        return 0;
      }
      if (definition.empty()) throw InputError("cli", "give a definition name (ptxbench definitions list)");
      Catalog catalog = Catalog::load(data_root());
      const Definition& def = catalog.definition(definition);
      const Workload& w = workload.empty() ? catalog.default_workload(definition) : catalog.find_workload(definition, workload);
      std::string chosen = tag.empty() ? builder.default_tags().back() : tag;
      Prompt p = builder.build(def, resolve_workload(def, w), chosen, arch);
      if (json) {
        fmt::print("{}\n", to_json(p).dump(2));
        return 0;
      }
      if (!tokens_only) fmt::print("===== system =====\n{}\n===== user =====\n{}\n", p.system, p.user);
      fmt::print("===== tokens (estimate; docs/prompts.md) — {} / {} / tag {} =====\n", def.name, arch, chosen);
      for (const auto& c : p.components) fmt::print("{:<10} {:>7}  {}\n", c.name, c.tokens, c.source);
      fmt::print("{:<10} {:>7}\n", "total", p.total_tokens());
      return 0;
    };
  });
}

}  // namespace ptxbench::cli

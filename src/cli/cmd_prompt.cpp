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
  static std::string definition, tag, arch = "sm_90a", gpu, workload;
  static bool json = false, tokens_only = false, list = false;
  auto* cmd = app.add_subcommand("prompt", "print the system and user messages for a definition and a prompt tag");
  cmd->add_option("definition", definition, "definition name");
  cmd->add_option("--tag", tag,
                  "prompt tag (params, templates, contract, full, expert, paper-none, paper-a, paper-b) or components "
                  "and tags joined by '+'");
  auto* arch_opt =
      cmd->add_option("--arch", arch, "target: sm_90a (Hopper pack, H200 parameters) or sm_100a (Blackwell pack)")
          ->capture_default_str();
  cmd->add_option("--gpu", gpu, "target GPU instead of --arch: h100, h200 (Hopper pack) or b200; picks its parameters");
  cmd->add_option("--workload", workload, "workload uuid or axis values (default: the definition's default)");
  cmd->add_flag("--json", json, "print the prompt and its token counts (with --list-tags: the tags) as one JSON document");
  cmd->add_flag("--tokens", tokens_only, "print only the token count per component");
  cmd->add_flag("--list-tags", list, "list the tags and the default evaluation triplet");
  cmd->callback([&action, arch_opt] {
    const bool arch_given = arch_opt->count() > 0;
    action = [arch_given] {
      PromptBuilder builder(data_root());
      if (list && json) {
        fmt::print("{}\n", ordered_json{{"tags", builder.tag_names()},
                                        {"default_tags", builder.default_tags()},
                                        {"targets", builder.target_names()}}
                               .dump(2));
        return 0;
      }
      auto joined = [](const std::vector<std::string>& names) {
        std::string out;
        for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
        return out;
      };
      if (list) {
        for (const auto& t : builder.tag_names()) fmt::print("{}\n", t);
        fmt::print("default evaluation tags: {}\n", joined(builder.default_tags()));
        fmt::print("targets (--arch or --gpu): {}\n", joined(builder.target_names()));
        return 0;
      }
      if (definition.empty()) throw InputError("cli", "give a definition name (ptxbench definitions list)");
      Catalog catalog = Catalog::load(data_root());
      const Definition& def = catalog.definition(definition);
      const Workload& w = workload.empty() ? catalog.default_workload(definition) : catalog.find_workload(definition, workload);
      std::string chosen = tag.empty() ? builder.default_tags().back() : tag;
      Prompt p = builder.build(def, resolve_workload(def, w), chosen, gpu.empty() ? arch : gpu);
      if (!gpu.empty() && arch_given && p.arch != arch)
        throw InputError("cli", "--gpu " + gpu + " is " + p.arch + ", not --arch " + arch + " (give one of them)");
      if (json) {
        fmt::print("{}\n", to_json(p).dump(2));
        return 0;
      }
      if (!tokens_only) fmt::print("===== system =====\n{}\n===== user =====\n{}\n", p.system, p.user);
      fmt::print("===== tokens ({}; estimate beside; docs/prompts.md) — {} / {} / tag {} =====\n", p.token_counter, def.name,
                 p.target, chosen);
      for (const auto& c : p.components) fmt::print("{:<10} {:>7} {:>7}  {}\n", c.name, c.tokens, c.estimate, c.source);
      fmt::print("{:<10} {:>7} {:>7}\n", "total", p.total_tokens(), p.total_estimate());
      return 0;
    };
  });
}

}  // namespace ptxbench::cli

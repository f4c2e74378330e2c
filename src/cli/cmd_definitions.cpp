// `ptxbench definitions list|show`: the definitions and workloads as data; `list --set NAME` lists
// one problem set of definitions/problem_sets.json.
#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.h"
#include "common/json_check.h"
#include "definitions/catalog.h"

namespace ptxbench::cli {
namespace {

/// `definitions show --json`: the definition document as in prompts, where it came from, and its
/// workloads (uuid, axis values, whether it is the default).
ordered_json show_json(const Catalog& c, const Definition& d) {
  const Workload& def = c.default_workload(d.name);
  ordered_json workloads = ordered_json::array();
  for (const auto& w : c.workloads(d.name))
    workloads.push_back({{"uuid", w.uuid}, {"label", w.label(d)}, {"axes", w.axes}, {"default", w.uuid == def.uuid},
                         {"source", w.source}});
  return {{"definition", ordered_json::parse(d.json_text)}, {"source", d.source}, {"workloads", workloads}};
}

/// The value of the definition's "stage:" tag ("evaluation", "generalization"), "" without one.
std::string stage_of(const Definition& d) {
  const std::string prefix = "stage:";
  for (const auto& t : d.tags)
    if (t.rfind(prefix, 0) == 0) return t.substr(prefix.size());
  return "";
}

/// Every definition, or the members of problem set `set` in the set's order.
std::vector<const Definition*> listed(const Catalog& c, const std::string& set) {
  std::vector<const Definition*> out;
  if (set.empty())
    for (const auto& d : c.definitions()) out.push_back(&d);
  else
    for (const auto& name : c.problem_set(set)) out.push_back(&c.definition(name));
  return out;
}

}  // namespace

void register_definitions(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("definitions", "list or show the operator definitions and their workloads");
  cmd->require_subcommand(1);
  static bool json = false;
  static std::string name;
  static std::string set;
  auto* list = cmd->add_subcommand("list", "one line per definition");
  list->add_flag("--json", json, "print the list as one JSON document (an array)");
  list->add_option("--set", set,
                   "only the definitions of this problem set (definitions/problem_sets.json: evaluation, 4ops, "
                   "8ops, heldout-gqa, ...), in its order");
  list->callback([&action] {
    action = [] {
      Catalog c = Catalog::load(data_root());
      const std::vector<const Definition*> defs = listed(c, set);
      if (json) {
        ordered_json out = ordered_json::array();
        for (const Definition* d : defs)
          out.push_back({{"name", d->name}, {"op_type", d->op_type}, {"stage", stage_of(*d)},
                         {"workloads", c.workloads(d->name).size()},
                         {"default_workload", c.default_workload(d->name).label(*d)}});
        fmt::print("{}\n", out.dump(2));
        return 0;
      }
      // Columns as wide as their longest entry (the GQA names are longer than the rest).
      std::size_t name_w = 28, op_w = 16;
      for (const Definition* d : defs) {
        name_w = std::max(name_w, d->name.size());
        op_w = std::max(op_w, d->op_type.size());
      }
      fmt::print("{:<{}} {:<{}} {:<15} {:>9}  {}\n", "definition", name_w, "op_type", op_w, "stage", "workloads", "default");
      for (const Definition* d : defs)
        fmt::print("{:<{}} {:<{}} {:<15} {:>9}  {}\n", d->name, name_w, d->op_type, op_w, stage_of(*d),
                   c.workloads(d->name).size(), c.default_workload(d->name).label(*d));
      return 0;
    };
  });
  auto* show = cmd->add_subcommand("show", "the definition JSON and its workloads");
  show->add_option("name", name, "definition name")->required();
  show->add_flag("--json", json, "print the definition and its workloads as one JSON document");
  show->callback([&action] {
    action = [] {
      Catalog c = Catalog::load(data_root());
      const Definition& d = c.definition(name);
      if (json) {
        fmt::print("{}\n", show_json(c, d).dump(2));
        return 0;
      }
      fmt::print("{}\n\nworkloads (source {}):\n", d.json_text, d.source);
      const Workload& def = c.default_workload(name);
      for (const auto& w : c.workloads(name))
        fmt::print("  {:<36} {}{}\n", w.uuid, w.label(d), w.uuid == def.uuid ? "  (default)" : "");
      return 0;
    };
  });
}

}  // namespace ptxbench::cli

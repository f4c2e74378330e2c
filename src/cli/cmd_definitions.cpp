// `ptxbench definitions list|show`: the definitions and workloads as data.
#include <fmt/format.h>

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

}  // namespace

void register_definitions(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("definitions", "list or show the operator definitions and their workloads");
  cmd->require_subcommand(1);
  static bool json = false;
  static std::string name;
  auto* list = cmd->add_subcommand("list", "one line per definition");
  list->add_flag("--json", json, "print the list as one JSON document (an array)");
  list->callback([&action] {
    action = [] {
      Catalog c = Catalog::load(data_root());
      if (json) {
        ordered_json out = ordered_json::array();
        for (const auto& d : c.definitions())
          out.push_back({{"name", d.name}, {"op_type", d.op_type}, {"workloads", c.workloads(d.name).size()},
                         {"default_workload", c.default_workload(d.name).label(d)}});
        fmt::print("{}\n", out.dump(2));
        return 0;
      }
      fmt::print("{:<28} {:<16} {:>9}  {}\n", "definition", "op_type", "workloads", "default");
      for (const auto& d : c.definitions())
        fmt::print("{:<28} {:<16} {:>9}  {}\n", d.name, d.op_type, c.workloads(d.name).size(),
                   c.default_workload(d.name).label(d));
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

#include "definitions/workload_selection.h"

#include <algorithm>
#include <set>

#include "common/error.h"

namespace ptxbench {
namespace {

constexpr const char* kAll = "all";

std::string trimmed(const std::string& s) {
  const char* space = " \t\r\n";
  std::size_t from = s.find_first_not_of(space);
  if (from == std::string::npos) return "";
  return s.substr(from, s.find_last_not_of(space) - from + 1);
}

// The items' comma-separated pieces, trimmed, in order.
std::vector<std::string> pieces(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::size_t from = 0;
    for (;;) {
      std::size_t comma = item.find(',', from);
      out.push_back(trimmed(item.substr(from, comma == std::string::npos ? std::string::npos : comma - from)));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
  return out;
}

const Workload* named(const std::vector<Workload>& list, const Definition& def, const std::string& selector) {
  for (const auto& w : list)
    if (w.uuid == selector || w.label(def) == selector) return &w;
  return nullptr;
}

}  // namespace

std::string WorkloadSelection::text() const {
  if (all) return kAll;
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

WorkloadSelection parse_workload_selection(const std::string& text) {
  std::string t = trimmed(text);
  if (t.empty()) throw InputError("workloads", "expected \"all\" or a comma-separated list of workloads, got nothing");
  WorkloadSelection s;
  if (t == kAll) {
    s.all = true;
    return s;
  }
  s.items = pieces({t});
  for (const auto& item : s.items) {
    if (item.empty()) throw InputError("workloads", "an empty item in the workload list '" + t + "'");
    if (item == kAll) throw InputError("workloads", "\"all\" stands alone, not in a list ('" + t + "')");
  }
  return s;
}

ordered_json to_json(const WorkloadSelection& s) { return s.all ? ordered_json(kAll) : ordered_json(s.items); }

WorkloadSelection workload_selection_from_json(const ordered_json& j, const std::string& what) {
  try {
    if (j.is_string()) return parse_workload_selection(j.get<std::string>());
    if (!j.is_array() || j.empty())
      throw InputError("workloads", std::string("expected \"all\" or a non-empty array of workloads, got ") + j.type_name());
    WorkloadSelection s;
    for (const auto& item : j) {
      if (!item.is_string() || trimmed(item.get<std::string>()).empty())
        throw InputError("workloads", "expected workload uuids or axis values (non-empty strings)");
      if (trimmed(item.get<std::string>()) == kAll) throw InputError("workloads", "\"all\" stands alone, not in a list");
      s.items.push_back(trimmed(item.get<std::string>()));
    }
    return s;
  } catch (const InputError& e) {
    throw InputError("workloads", what + ": " + JsonChecker::message_of(e));
  }
}

std::vector<const Workload*> select_workloads(const Catalog& catalog, const std::string& definition,
                                              const WorkloadSelection& s) {
  const Definition& def = catalog.definition(definition);
  const std::vector<Workload>& list = catalog.workloads(definition);
  std::vector<const Workload*> out;
  if (s.all) {
    for (const auto& w : list) out.push_back(&w);
    if (out.empty()) throw InputError("workloads", definition + " has no workloads");
    return out;
  }
  if (s.items.empty()) throw InputError("workloads", "no workload selected for " + definition);
  // Each workload is the shortest run of pieces that names one: "M=70" alone, "S=512,B=2" across
  // its comma (a workload's label lists every variable axis, so a shorter run never matches).
  std::vector<std::string> p = pieces(s.items);
  std::set<const Workload*> seen;
  for (std::size_t i = 0; i < p.size();) {
    const Workload* w = nullptr;
    std::string selector;
    std::size_t j = i;
    for (; !w && j < p.size(); ++j) {
      selector += (j == i ? "" : ",") + p[j];
      w = named(list, def, selector);
    }
    if (!w) {
      (void)catalog.find_workload(definition, p[i]);  // throws, listing the known workloads
      throw InputError("workloads", "no workload '" + p[i] + "' for " + definition);
    }
    if (!seen.insert(w).second)
      throw InputError("workloads", "workload " + w->label(def) + " (" + w->uuid + ") of " + definition + " is listed twice");
    out.push_back(w);
    i = j;
  }
  return out;
}

}  // namespace ptxbench

// Which workloads of a definition a sweep covers (`eval --workloads`, a run config's "workloads"):
// every workload of the definition, or a list of them, in the order the sweep evaluates them.
#pragma once

#include <string>
#include <vector>

#include "common/json_check.h"
#include "definitions/catalog.h"

namespace ptxbench {

struct WorkloadSelection {
  bool all = false;
  /// Workload uuids or axis values ("M=70"), as given; a multi-axis selector ("S=512,B=2") may
  /// arrive split at its commas: select_workloads reads across them. Empty when `all`.
  std::vector<std::string> items;

  /// Neither all nor a list: no sweep (one workload is evaluated, as without the option).
  [[nodiscard]] bool empty() const noexcept { return !all && items.empty(); }
  /// "all", or the items joined by commas (how the CLI takes it).
  [[nodiscard]] std::string text() const;
};

/// "all", or a comma-separated list of workload uuids or axis values ("M=70,M=8192"; spaces around
/// items are dropped). InputError for an empty text or an empty item. Only the shape is checked
/// here: the names are resolved against a definition by select_workloads.
WorkloadSelection parse_workload_selection(const std::string& text);

/// The stored form (run config): "all", or an array of the items.
ordered_json to_json(const WorkloadSelection& s);
/// "all", a comma-separated string (as parse_workload_selection), or an array of non-empty
/// strings; anything else is an InputError naming `what`.
WorkloadSelection workload_selection_from_json(const ordered_json& j, const std::string& what);

/// The workloads that `s` names for `definition`, in sweep order: the workloads file's order for
/// all, the given order for a list (items are matched by uuid or by axis values, as
/// Catalog::find_workload does, reading a multi-axis selector across its commas). InputError for
/// an unknown definition, an empty selection, an item that names no workload (the error lists the
/// known ones) and a workload named twice.
std::vector<const Workload*> select_workloads(const Catalog& catalog, const std::string& definition,
                                              const WorkloadSelection& s);

}  // namespace ptxbench

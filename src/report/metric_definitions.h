// The named definitions of every metric and rule of metrics.h (what is counted, each rate and
// speedup, Fast_p, pass@k, the intervals, provenance, labels and tokens), printed by every output.
#pragma once

#include <string>
#include <vector>

namespace ptxbench::report {

struct MetricDefinition {
  std::string key;
  std::string name;
  std::string text;
};
const std::vector<MetricDefinition>& metric_definitions();
/// The text of one definition by key ("" when unknown).
const std::string& definition_text(const std::string& key);

}  // namespace ptxbench::report

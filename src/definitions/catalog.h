// The catalog of definitions (definitions/*.json) and their workloads (workloads/*.jsonl).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/fs.h"
#include "definitions/definition.h"
#include "definitions/workload.h"

namespace ptxbench {

class Catalog {
 public:
  /// Loads <root>/definitions/*.json and <root>/workloads/*.jsonl; any malformed file is an
  /// InputError naming the file and the field.
  static Catalog load(const fs::path& root);

  [[nodiscard]] const std::vector<Definition>& definitions() const noexcept { return m_definitions; }
  /// Throws InputError listing the known names when `name` is unknown.
  [[nodiscard]] const Definition& definition(const std::string& name) const;
  [[nodiscard]] const std::vector<Workload>& workloads(const std::string& definition) const;
  /// The workload tagged "default", else the first one listed.
  [[nodiscard]] const Workload& default_workload(const std::string& definition) const;
  /// By uuid, or by axis values "M=8192" / "M=8192,S=4096".
  [[nodiscard]] const Workload& find_workload(const std::string& definition,
                                              const std::string& selector) const;

  void add_definition(Definition def);
  void add_workload(Workload w);

 private:
  std::vector<Definition> m_definitions;
  std::map<std::string, std::vector<Workload>> m_workloads;
};

}  // namespace ptxbench

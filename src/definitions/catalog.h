// The catalog of definitions (definitions/*.json) and their workloads (workloads/*.jsonl), with the
// named problem sets of definitions/problem_sets.json ("evaluation", "8ops", ...).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/fs.h"
#include "definitions/definition.h"
#include "definitions/workload.h"

namespace ptxbench {

/// A named list of definitions, e.g. "evaluation" (what the main job runs) or "8ops".
struct ProblemSet {
  std::string name;
  std::vector<std::string> definitions;  ///< in file order
  std::string source;                    ///< file it came from
};

class Catalog {
 public:
  /// The problem sets' file under definitions/; the only .json there that is not a definition.
  static constexpr const char* kProblemSetsFile = "problem_sets.json";

  /// Loads <root>/definitions/*.json, <root>/workloads/*.jsonl and, when present,
  /// <root>/definitions/problem_sets.json; any malformed file, and a set naming a definition that
  /// does not exist, is an InputError naming the file and the field.
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

  [[nodiscard]] const std::vector<ProblemSet>& problem_sets() const noexcept { return m_problem_sets; }
  /// The definition names of set `name`; InputError listing the known sets when it is unknown.
  [[nodiscard]] const std::vector<std::string>& problem_set(const std::string& name) const;

  void add_definition(Definition def);
  void add_workload(Workload w);
  /// InputError when the name repeats, the set is empty, or a member is not a known definition or
  /// appears twice: add the definitions first.
  void add_problem_set(ProblemSet set);

 private:
  std::vector<Definition> m_definitions;
  std::map<std::string, std::vector<Workload>> m_workloads;
  std::vector<ProblemSet> m_problem_sets;
};

/// Parses problem_sets.json: one object whose members are set names, each an array of definition
/// names. Shape only; Catalog::add_problem_set checks the names.
std::vector<ProblemSet> parse_problem_sets(const std::string& text, const std::string& document);

/// The definitions of set `name` in <root>/definitions/problem_sets.json, read without loading the
/// catalog (for configs that name a set: run configs, data recipes); nullopt when the file or the
/// set is missing.
std::optional<std::vector<std::string>> find_problem_set(const fs::path& root, const std::string& name);

}  // namespace ptxbench

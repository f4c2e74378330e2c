#include "definitions/catalog.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "common/error.h"
#include "common/json_check.h"

namespace ptxbench {

std::vector<ProblemSet> parse_problem_sets(const std::string& text, const std::string& document) {
  JsonChecker check(document);
  ordered_json j = check.parse(text);
  check.require_object(j, "");
  std::vector<ProblemSet> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    ProblemSet set;
    set.name = it.key();
    set.source = document;
    const bool word = !set.name.empty() && std::all_of(set.name.begin(), set.name.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
    });
    if (!word) check.fail(set.name, "a set name is letters, digits, '_' and '-'");
    if (!it.value().is_array()) check.fail(set.name, "expected an array of definition names");
    for (std::size_t i = 0; i < it.value().size(); ++i) {
      const auto& member = it.value()[i];
      if (!member.is_string() || member.get<std::string>().empty())
        check.fail(set.name + "[" + std::to_string(i) + "]", "expected a definition name");
      set.definitions.push_back(member.get<std::string>());
    }
    out.push_back(std::move(set));
  }
  return out;
}

std::optional<std::vector<std::string>> find_problem_set(const fs::path& root, const std::string& name) {
  const fs::path file = root / "definitions" / Catalog::kProblemSetsFile;
  if (!fs::exists(file)) return std::nullopt;
  for (auto& set : parse_problem_sets(read_file(file), file.string()))
    if (set.name == name) return std::move(set.definitions);
  return std::nullopt;
}

Catalog Catalog::load(const fs::path& root) {
  Catalog c;
  fs::path defs = root / "definitions";
  if (!fs::is_directory(defs))
    throw InputError("definitions", "no definitions folder at " + defs.string() +
                                        " (set PTXBENCH_HOME to the ptxbench data root)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(defs))
    if (e.path().extension() == ".json" && e.path().filename() != kProblemSetsFile) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) c.add_definition(parse_definition(read_file(f), f.string()));

  fs::path loads = root / "workloads";
  if (fs::is_directory(loads)) {
    std::vector<fs::path> wfiles;
    for (const auto& e : fs::directory_iterator(loads))
      if (e.path().extension() == ".jsonl") wfiles.push_back(e.path());
    std::sort(wfiles.begin(), wfiles.end());
    for (const auto& f : wfiles) {
      std::istringstream in(read_file(f));
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::string doc = f.string() + ":" + std::to_string(n);
        const Definition& d = c.definition(workload_definition_name(line, doc));
        c.add_workload(parse_workload(line, doc, d));
      }
    }
  }

  fs::path sets = defs / kProblemSetsFile;
  if (fs::exists(sets))
    for (ProblemSet& s : parse_problem_sets(read_file(sets), sets.string())) c.add_problem_set(std::move(s));
  return c;
}

void Catalog::add_definition(Definition def) {
  for (const auto& d : m_definitions)
    if (d.name == def.name)
      throw InputError("definitions", def.source + ": definition '" + def.name +
                                          "' already defined in " + d.source);
  m_definitions.push_back(std::move(def));
}

void Catalog::add_workload(Workload w) {
  auto& list = m_workloads[w.definition];
  for (const auto& existing : list)
    if (existing.uuid == w.uuid)
      throw InputError("definitions", w.source + ": workload uuid '" + w.uuid + "' repeats " +
                                          existing.source);
  list.push_back(std::move(w));
}

void Catalog::add_problem_set(ProblemSet set) {
  const std::string where = set.source + ": " + set.name;
  for (const auto& s : m_problem_sets)
    if (s.name == set.name) throw InputError("definitions", where + ": problem set already defined in " + s.source);
  if (set.definitions.empty()) throw InputError("definitions", where + ": a problem set names at least one definition");
  for (std::size_t i = 0; i < set.definitions.size(); ++i) {
    const std::string& member = set.definitions[i];
    const std::string at = where + "[" + std::to_string(i) + "]: ";
    bool known = std::any_of(m_definitions.begin(), m_definitions.end(),
                             [&](const Definition& d) { return d.name == member; });
    if (!known) throw InputError("definitions", at + "unknown definition '" + member + "'");
    if (std::find(set.definitions.begin(), set.definitions.begin() + static_cast<std::ptrdiff_t>(i), member) !=
        set.definitions.begin() + static_cast<std::ptrdiff_t>(i))
      throw InputError("definitions", at + "'" + member + "' is listed twice");
  }
  m_problem_sets.push_back(std::move(set));
}

const std::vector<std::string>& Catalog::problem_set(const std::string& name) const {
  for (const auto& s : m_problem_sets)
    if (s.name == name) return s.definitions;
  std::string known;
  for (const auto& s : m_problem_sets) known += (known.empty() ? "" : ", ") + s.name;
  throw InputError("definitions",
                   "unknown problem set '" + name + "' (known: " + (known.empty() ? "none" : known) + ")");
}

const Definition& Catalog::definition(const std::string& name) const {
  for (const auto& d : m_definitions)
    if (d.name == name) return d;
  std::string known;
  for (const auto& d : m_definitions) known += (known.empty() ? "" : ", ") + d.name;
  throw InputError("definitions", "unknown definition '" + name + "' (known: " + known + ")");
}

const std::vector<Workload>& Catalog::workloads(const std::string& definition) const {
  (void)this->definition(definition);
  auto it = m_workloads.find(definition);
  if (it == m_workloads.end() || it->second.empty())
    throw InputError("definitions", "definition '" + definition + "' has no workloads");
  return it->second;
}

const Workload& Catalog::default_workload(const std::string& definition) const {
  const auto& list = workloads(definition);
  for (const auto& w : list)
    if (w.is_default()) return w;
  return list.front();
}

const Workload& Catalog::find_workload(const std::string& definition,
                                       const std::string& selector) const {
  const auto& list = workloads(definition);
  const Definition& def = this->definition(definition);
  for (const auto& w : list)
    if (w.uuid == selector || w.label(def) == selector) return w;
  std::string known;
  for (const auto& w : list) known += (known.empty() ? "" : ", ") + w.label(def);
  throw InputError("definitions", "no workload '" + selector + "' for " + definition +
                                      " (known: " + known + ")");
}

}  // namespace ptxbench

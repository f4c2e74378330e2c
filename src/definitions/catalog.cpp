#include "definitions/catalog.h"

#include <algorithm>
#include <sstream>

#include "common/error.h"

namespace ptxbench {

Catalog Catalog::load(const fs::path& root) {
  Catalog c;
  fs::path defs = root / "definitions";
  if (!fs::is_directory(defs))
    throw InputError("definitions", "no definitions folder at " + defs.string() +
                                        " (set PTXBENCH_HOME to the ptxbench data root)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(defs))
    if (e.path().extension() == ".json") files.push_back(e.path());
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

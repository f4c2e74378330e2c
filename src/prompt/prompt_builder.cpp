#include "prompt/prompt_builder.h"

#include <algorithm>
#include <set>

#include "common/error.h"
#include "prompt/token_estimate.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "prompt";
const char* kComponents[] = {"params", "templates", "contract", "patterns", "expert"};

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) s.replace(pos, from.size(), to);
}

// Prompts show the templates' API and documentation; the bodies of `namespace detail` (generated
// per-shape inline asm) are elided because the headers themselves are on the compile include path.
std::string elide_detail(const std::string& header) {
  const std::string open = "namespace detail {", close = "}  // namespace detail";
  auto b = header.find(open);
  auto e = header.find(close);
  if (b == std::string::npos || e == std::string::npos || e < b) return header;
  return header.substr(0, b + open.size()) +
         "\n// ... generated per-shape inline PTX elided here; the full header is on the include path ...\n" +
         header.substr(e);
}

std::string tensor_line(const TensorSpec& t) {
  return t.name + " " + t.shape_text() + " " + dtype_name(t.dtype);
}

}  // namespace

std::size_t Prompt::total_tokens() const {
  std::size_t n = 0;
  for (const auto& c : components) n += c.tokens;
  return n;
}

ordered_json to_json(const Prompt& p) {
  ordered_json comps = ordered_json::array();
  for (const auto& c : p.components)
    comps.push_back({{"name", c.name}, {"source", c.source}, {"chars", c.text.size()}, {"tokens", c.tokens}});
  return {{"tag", p.tag},   {"arch", p.arch},     {"components", comps}, {"total_tokens", p.total_tokens()},
          {"system", p.system}, {"user", p.user}};
}

PromptBuilder::PromptBuilder(fs::path root) : m_root(std::move(root)) {
  fs::path file = m_root / "knowledge/prompts/tags.json";
  JsonChecker check(file.string());
  m_config = check.parse(read_file(file));
  check.only_fields(m_config, "", {"description", "components", "tags", "default_tags", "targets", "patterns", "experts",
                                   "baselines"});
  for (const char* key : {"tags", "targets", "patterns"}) check.require_object(check.member(m_config, "", key), key);
  for (auto it = m_config["tags"].begin(); it != m_config["tags"].end(); ++it)
    for (const auto& c : it.value())
      if (std::find(std::begin(kComponents), std::end(kComponents), c.get<std::string>()) == std::end(kComponents))
        check.fail("tags." + it.key(), "unknown component '" + c.get<std::string>() + "'");
}

std::vector<std::string> PromptBuilder::tag_names() const {
  std::vector<std::string> out;
  for (auto it = m_config["tags"].begin(); it != m_config["tags"].end(); ++it) out.push_back(it.key());
  return out;
}

std::vector<std::string> PromptBuilder::default_tags() const {
  return m_config.value("default_tags", std::vector<std::string>{});
}

std::vector<std::string> PromptBuilder::components_of(const std::string& tag) const {
  if (m_config["tags"].contains(tag)) return m_config["tags"][tag].get<std::vector<std::string>>();
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= tag.size()) {
    std::size_t end = std::min(tag.find('+', start), tag.size());
    std::string part = tag.substr(start, end - start);
    if (std::find(std::begin(kComponents), std::end(kComponents), part) == std::end(kComponents)) {
      std::string names;
      for (const auto& t : tag_names()) names += (names.empty() ? "" : ", ") + t;
      throw InputError(kLib, "unknown prompt tag '" + tag + "' (tags: " + names +
                                 "; or components joined by '+': params, templates, contract, patterns, expert)");
    }
    out.push_back(part);
    start = end + 1;
  }
  return out;
}

Prompt PromptBuilder::build(const Definition& def, const ResolvedWorkload& w, const std::string& tag,
                            const std::string& arch) const {
  if (!m_config["targets"].contains(arch)) throw InputError(kLib, "no knowledge pack for architecture '" + arch + "'");
  const auto& target = m_config["targets"][arch];
  const std::string pack = target.at("pack").get<std::string>();
  const fs::path pack_dir = m_root / "knowledge" / pack;
  std::vector<std::string> chosen = components_of(tag);
  std::set<std::string> want(chosen.begin(), chosen.end());

  Prompt p;
  p.tag = tag;
  p.arch = arch;
  auto add = [&](std::string name, std::string source, std::string text) {
    PromptComponent c{std::move(name), std::move(source), std::move(text), 0};
    c.tokens = estimate_tokens(c.text);
    p.components.push_back(std::move(c));
  };

  std::string rules = read_file(m_root / "knowledge/prompts/rules.md");
  std::string baseline = "the vendor library";
  if (m_config.contains("baselines") && m_config["baselines"].contains(def.op_type))
    baseline = m_config["baselines"][def.op_type].get<std::string>();
  std::string umbrella = pack == "hopper" ? "ptxb/sm90.cuh" : "ptxb/sm100.cuh";
  replace_all(rules, "{gpu}", target.at("gpu_name").get<std::string>());
  replace_all(rules, "{arch}", arch);
  replace_all(rules, "{baseline}", baseline);
  replace_all(rules, "{templates_note}",
              want.count("templates") ? " and the PTX templates below (`#include \"" + umbrella + "\"`)" : "");
  add("rules", "knowledge/prompts/rules.md", rules);

  add("abi", "knowledge/abi/ABI.md, knowledge/abi/ptxbench_abi.h",
      read_file(m_root / "knowledge/abi/ABI.md") + "\n`ptxbench_abi.h`:\n```c\n" +
          read_file(m_root / "knowledge/abi/ptxbench_abi.h") + "```\n");

  if (want.count("params")) {
    std::string file = "params/" + target.at("gpu").get<std::string>() + ".json";
    add("params", "knowledge/" + pack + "/" + file,
        "# Architecture parameters: " + target.at("gpu_name").get<std::string>() + " (" + arch + ")\n```json\n" +
            read_file(pack_dir / file) + "```\n");
  }
  if (want.count("templates")) {
    std::vector<fs::path> headers;
    for (const auto& e : fs::directory_iterator(pack_dir / "include/ptxb"))
      if (e.path().extension() == ".cuh") headers.push_back(e.path());
    std::sort(headers.begin(), headers.end());
    std::string text = "# PTX templates (namespace ptxb; `#include \"" + umbrella + "\"` includes them all)\n";
    for (const auto& h : headers)
      text += "\n```cuda\n// ---- ptxb/" + h.filename().string() + "\n" + elide_detail(read_file(h)) + "```\n";
    add("templates", "knowledge/" + pack + "/include/ptxb/*.cuh", text);
  }
  if (want.count("contract")) add("contract", "knowledge/" + pack + "/contract.md", read_file(pack_dir / "contract.md"));
  if (want.count("patterns")) {
    const auto& by_op = m_config["patterns"].value(pack, ordered_json::object());
    if (!by_op.contains(def.op_type)) throw InputError(kLib, "no patterns for op_type '" + def.op_type + "' in the " + pack + " pack");
    std::string text, sources;
    for (const auto& name : by_op[def.op_type]) {
      std::string file = "patterns/" + name.get<std::string>() + ".md";
      text += read_file(pack_dir / file) + "\n";
      sources += (sources.empty() ? "" : ", ") + ("knowledge/" + pack + "/" + file);
    }
    add("patterns", sources, text);
  }
  if (want.count("expert")) {
    const auto experts = m_config.value("experts", ordered_json::object()).value(pack, ordered_json::object());
    if (!experts.contains(def.name)) throw InputError(kLib, "no expert kernel for " + def.name + " in the " + pack + " pack");
    std::string file = experts[def.name].get<std::string>();
    add("expert", "knowledge/" + pack + "/" + file,
        "# A correct, fast kernel for this definition (study it; write your own)\n```cuda\n" + read_file(pack_dir / file) +
            "```\n");
  }
  for (const auto& c : p.components) p.system += (p.system.empty() ? "" : "\n") + c.text;

  std::string task = "Implement the definition below for the given workload.\n\nDefinition:\n```json\n" + def.json_text +
                     "\n```\n\nWorkload " + w.workload.label(def) + ":\n";
  for (const auto& t : w.tensors) task += std::string(t.is_output ? "  output " : "  input  ") + tensor_line(t) + "\n";
  task += "\nCall order of ptxb_run's args: ";
  for (std::size_t i = 0; i < w.tensors.size(); ++i) task += (i ? ", " : "") + w.tensors[i].name;
  task += ".\nAnswer with exactly one ```cuda code block containing the complete file.\n";
  add("task", fs::relative(def.source, m_root).string(), task);
  p.user = p.components.back().text;
  return p;
}

}  // namespace ptxbench

#include "prompt/prompt_builder.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "common/error.h"
#include "prompt/bpe_tokenizer.h"
#include "prompt/token_estimate.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "prompt";
const char* kComponents[] = {"params",   "templates", "contract", "patterns",    "pattern_a", "pattern_b",
                             "expert",   "guidance",  "triton",   "triton_guide"};
// Knowledge written for CUDA-PTX candidates: a Triton prompt refuses them (they would teach the
// model an ABI and instructions its Python file cannot use).
const char* kCudaOnly[] = {"templates", "contract", "patterns", "pattern_a", "pattern_b", "expert", "guidance"};

bool is_component(const std::string& name) {
  return std::find(std::begin(kComponents), std::end(kComponents), name) != std::end(kComponents);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The `pack` → `op_type` table of a tags.json section, or an empty object when either is missing.
ordered_json by_op_type(const ordered_json& config, const char* section, const std::string& pack) {
  return config.value(section, ordered_json::object()).value(pack, ordered_json::object());
}

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

bool starts_with_triton(std::string_view part) { return part.rfind("triton", 0) == 0; }

// A scalar input (shape null, e.g. sm_scale) is a 0-d tensor: say where its value is, since "[]"
// alone reads as an empty array.
std::string tensor_line(const TensorSpec& t) {
  if (t.shape.empty()) return t.name + " scalar " + dtype_name(t.dtype) + " (ndim 0: one element in device memory)";
  return t.name + " " + t.shape_text() + " " + dtype_name(t.dtype);
}

/// What building one prompt reads (the tags.json entries of its target, the pack, the chosen
/// components) and the components it has added so far.
struct PackKnowledge {
  const fs::path& root;
  const ordered_json& config;
  const Definition& def;
  const ordered_json& target;  ///< tags.json "targets" entry
  std::string arch, pack;
  fs::path pack_dir;           ///< knowledge/<pack>
  std::set<std::string> want;  ///< the tag's components
  bool triton;
  const BpeTokenizer* tokenizer;  ///< nullptr: counts are estimates
  std::vector<PromptComponent>& components;

  /// Appends a component with its token counts.
  void add(std::string name, std::string source, std::string text) const {
    PromptComponent c{std::move(name), std::move(source), std::move(text), 0, 0};
    c.estimate = estimate_tokens(c.text);
    c.tokens = tokenizer ? tokenizer->count(c.text) : c.estimate;
    components.push_back(std::move(c));
  }
  /// Pattern notes, concatenated in order, each followed by a blank line; sources joined by ", ".
  void add_notes(const std::string& component, const ordered_json& names) const {
    std::string text, sources;
    for (const auto& name : names) {
      std::string file = "patterns/" + name.get<std::string>() + ".md";
      text += read_file(pack_dir / file) + "\n";
      sources += (sources.empty() ? "" : ", ") + ("knowledge/" + pack + "/" + file);
    }
    add(component, sources, text);
  }
};

/// A Triton tag takes the triton component and none written for CUDA-PTX candidates.
void check_language(const std::string& tag, const std::set<std::string>& want, bool triton) {
  if (triton && !want.count("triton"))
    throw InputError(kLib, "prompt tag '" + tag + "': triton_guide needs the triton component (tags triton-hopper, triton-hopper-noguide)");
  if (triton)
    for (const char* c : kCudaOnly)
      if (want.count(c))
        throw InputError(kLib, "prompt tag '" + tag + "': '" + c + "' is knowledge for CUDA-PTX candidates; a Triton prompt takes "
                               "only params and triton_guide beside its rules and ABI");
}

std::string umbrella_header(const std::string& pack) { return pack == "hopper" ? "ptxb/sm90.cuh" : "ptxb/sm100.cuh"; }

void add_rules(const PackKnowledge& k) {
  const std::string rules_file = k.triton ? "knowledge/triton/rules.md" : "knowledge/prompts/rules.md";
  std::string rules = read_file(k.root / rules_file);
  std::string baseline = "the vendor library";
  if (k.config.contains("baselines") && k.config["baselines"].contains(k.def.op_type))
    baseline = k.config["baselines"][k.def.op_type].get<std::string>();
  replace_all(rules, "{gpu}", k.target.at("gpu_name").get<std::string>());
  replace_all(rules, "{arch}", k.arch);
  replace_all(rules, "{baseline}", baseline);
  replace_all(rules, "{templates_note}",
              k.want.count("templates") ? " and the PTX templates below (`#include \"" + umbrella_header(k.pack) + "\"`)" : "");
  k.add("rules", rules_file, rules);
}

void add_abi(const PackKnowledge& k) {
  if (k.triton)
    k.add("abi", "knowledge/triton/ABI.md", read_file(k.root / "knowledge/triton/ABI.md"));
  else
    k.add("abi", "knowledge/abi/ABI.md, knowledge/abi/ptxbench_abi.h",
          read_file(k.root / "knowledge/abi/ABI.md") + "\n`ptxbench_abi.h`:\n```c\n" +
              read_file(k.root / "knowledge/abi/ptxbench_abi.h") + "```\n");
}

void add_params_and_templates(const PackKnowledge& k) {
  if (k.want.count("params")) {
    std::string file = "params/" + k.target.at("gpu").get<std::string>() + ".json";
    k.add("params", "knowledge/" + k.pack + "/" + file,
          "# Architecture parameters: " + k.target.at("gpu_name").get<std::string>() + " (" + k.arch + ")\n```json\n" +
              read_file(k.pack_dir / file) + "```\n");
  }
  if (k.want.count("templates")) {
    std::vector<fs::path> headers;
    for (const auto& e : fs::directory_iterator(k.pack_dir / "include/ptxb"))
      if (e.path().extension() == ".cuh") headers.push_back(e.path());
    std::sort(headers.begin(), headers.end());
    std::string text = "# PTX templates (namespace ptxb; `#include \"" + umbrella_header(k.pack) + "\"` includes them all)\n";
    for (const auto& h : headers)
      text += "\n```cuda\n// ---- ptxb/" + h.filename().string() + "\n" + elide_detail(read_file(h)) + "```\n";
    k.add("templates", "knowledge/" + k.pack + "/include/ptxb/*.cuh", text);
  }
}

/// patterns, then the paper hints pattern_a and pattern_b, for the definition's op_type.
void add_pattern_notes(const PackKnowledge& k) {
  const std::string& op_type = k.def.op_type;
  if (k.want.count("patterns")) {
    const auto by_op = by_op_type(k.config, "patterns", k.pack);
    if (!by_op.contains(op_type)) throw InputError(kLib, "no patterns for op_type '" + op_type + "' in the " + k.pack + " pack");
    k.add_notes("patterns", by_op[op_type]);
  }
  for (const char* which : {"pattern_a", "pattern_b"}) {
    if (!k.want.count(which)) continue;
    const auto by_op = by_op_type(k.config, "pattern_variants", k.pack);
    if (!by_op.contains(op_type))
      throw InputError(kLib, std::string(which) + ": no paper hints for op_type '" + op_type + "' in the " + k.pack +
                                 " pack (tags.json pattern_variants)");
    k.add_notes(which, by_op[op_type][which == std::string("pattern_a") ? "a" : "b"]);
  }
}

void add_expert_and_guidance(const PackKnowledge& k) {
  if (k.want.count("expert")) {
    const auto experts = k.config.value("experts", ordered_json::object()).value(k.pack, ordered_json::object());
    if (!experts.contains(k.def.name)) throw InputError(kLib, "no expert kernel for " + k.def.name + " in the " + k.pack + " pack");
    std::string file = experts[k.def.name].get<std::string>();
    k.add("expert", "knowledge/" + k.pack + "/" + file,
          "# A correct, fast kernel for this definition (study it; write your own)\n```cuda\n" + read_file(k.pack_dir / file) +
              "```\n");
  }
  // Last in the system message, as the original appends its patch after the hint. Op types without
  // a guidance note (GEMM) get nothing, so one tag list serves every definition of a run.
  if (k.want.count("guidance")) {
    const auto by_op = by_op_type(k.config, "guidance", k.pack);
    if (by_op.contains(k.def.op_type)) {
      std::string file = "patterns/" + by_op[k.def.op_type].get<std::string>() + ".md";
      k.add("guidance", "knowledge/" + k.pack + "/" + file, read_file(k.pack_dir / file));
    }
  }
}

void add_triton_guide(const PackKnowledge& k) {
  if (!k.want.count("triton_guide")) return;
  const std::string file = "knowledge/triton/" + k.pack + ".md";
  if (!fs::exists(k.root / file))
    throw InputError(kLib, "triton_guide: no Triton guide for the " + k.pack + " pack (" + file + "); use triton-hopper-noguide");
  k.add("triton_guide", file, read_file(k.root / file));
}

/// The user message: the definition, the workload's tensors, the argument order and the answer's form.
std::string task_text(const Definition& def, const ResolvedWorkload& w, bool triton) {
  std::string task = "Implement the definition below for the given workload.\n\nDefinition:\n```json\n" + def.json_text +
                     "\n```\n\nWorkload " + w.workload.label(def) + ":\n";
  for (const auto& t : w.tensors) task += std::string(t.is_output ? "  output " : "  input  ") + tensor_line(t) + "\n";
  task += triton ? "\nArguments of run, in order: " : "\nCall order of ptxb_run's args: ";
  for (std::size_t i = 0; i < w.tensors.size(); ++i) task += (i ? ", " : "") + w.tensors[i].name;
  task += triton ? ".\nAnswer with exactly one ```python code block containing the complete file.\n"
                 : ".\nAnswer with exactly one ```cuda code block containing the complete file.\n";
  return task;
}

}  // namespace

CandidateLanguage prompt_tag_language(const std::string& tag) {
  std::size_t start = 0;
  while (start <= tag.size()) {
    std::size_t end = std::min(tag.find('+', start), tag.size());
    if (starts_with_triton(std::string_view(tag).substr(start, end - start))) return CandidateLanguage::triton;
    start = end + 1;
  }
  return CandidateLanguage::cuda;
}

std::size_t Prompt::total_tokens() const {
  std::size_t n = 0;
  for (const auto& c : components) n += c.tokens;
  return n;
}

std::size_t Prompt::total_estimate() const {
  std::size_t n = 0;
  for (const auto& c : components) n += c.estimate;
  return n;
}

ordered_json to_json(const Prompt& p) {
  ordered_json comps = ordered_json::array();
  for (const auto& c : p.components)
    comps.push_back({{"name", c.name}, {"source", c.source}, {"chars", c.text.size()}, {"tokens", c.tokens}, {"estimate", c.estimate}});
  ordered_json j = {{"tag", p.tag}, {"arch", p.arch}};
  if (!p.target.empty() && p.target != p.arch) j["target"] = p.target;
  if (p.language != CandidateLanguage::cuda) j["language"] = to_string(p.language);
  j["components"] = comps;
  j["total_tokens"] = p.total_tokens();
  j["total_estimate"] = p.total_estimate();
  j["token_counter"] = p.token_counter;
  j["system"] = p.system;
  j["user"] = p.user;
  return j;
}

PromptBuilder::PromptBuilder(fs::path root) : m_root(std::move(root)) {
  fs::path file = m_root / "knowledge/prompts/tags.json";
  JsonChecker check(file.string());
  m_config = check.parse(read_file(file));
  check.only_fields(m_config, "", {"description", "components", "tags", "default_tags", "targets", "patterns",
                                   "pattern_variants", "guidance", "experts", "baselines"});
  for (const char* key : {"tags", "targets", "patterns"}) check.require_object(check.member(m_config, "", key), key);
  for (auto it = m_config["tags"].begin(); it != m_config["tags"].end(); ++it) {
    bool triton = false;
    for (const auto& c : it.value()) {
      if (!is_component(c.get<std::string>())) check.fail("tags." + it.key(), "unknown component '" + c.get<std::string>() + "'");
      triton = triton || c.get<std::string>() == "triton";
    }
    // The language is read from the tag's name (prompt_tag_language), so the name must say it.
    if (triton != starts_with_triton(it.key()))
      check.fail("tags." + it.key(), triton ? "a tag with the triton component must be named triton-..."
                                            : "a tag named triton... must include the triton component");
  }
  for (auto it = m_config["targets"].begin(); it != m_config["targets"].end(); ++it) {
    const std::string path = "targets." + it.key();
    check.require_object(it.value(), path);
    check.only_fields(it.value(), path, {"arch", "pack", "gpu", "gpu_name"});
    for (const char* key : {"pack", "gpu", "gpu_name"}) (void)check.string_field(it.value(), path, key);
    (void)check.optional_string(it.value(), path, "arch", it.key());
  }
  // pattern_variants: pack → op_type → {"a": [notes], "b": [notes]}; each list is ONE hint (a note, or
  // the notes it is made of, in order). guidance: pack → op_type → one note.
  for (const char* section : {"pattern_variants", "guidance"}) {
    if (!m_config.contains(section)) continue;
    check.require_object(m_config[section], section);
    for (auto pack = m_config[section].begin(); pack != m_config[section].end(); ++pack) {
      check.require_object(pack.value(), std::string(section) + "." + pack.key());
      for (auto op = pack.value().begin(); op != pack.value().end(); ++op) {
        const std::string path = std::string(section) + "." + pack.key() + "." + op.key();
        if (std::string(section) == "guidance") {
          if (!op.value().is_string()) check.fail(path, "expected the name of a note under knowledge/" + pack.key() + "/patterns");
          continue;
        }
        check.require_object(op.value(), path);
        check.only_fields(op.value(), path, {"a", "b"});
        for (const char* which : {"a", "b"})
          if (check.string_list(op.value(), path, which).empty()) check.fail(path + "." + which, "name at least one note");
      }
    }
  }
}

std::vector<std::string> PromptBuilder::tag_names() const {
  std::vector<std::string> out;
  for (auto it = m_config["tags"].begin(); it != m_config["tags"].end(); ++it) out.push_back(it.key());
  return out;
}

std::vector<std::string> PromptBuilder::default_tags() const {
  return m_config.value("default_tags", std::vector<std::string>{});
}

std::vector<std::string> PromptBuilder::target_names() const {
  std::vector<std::string> out;
  for (auto it = m_config["targets"].begin(); it != m_config["targets"].end(); ++it) out.push_back(it.key());
  return out;
}

// A tags.json name, or '+'-joined parts each of which is a component or a tags.json name. Names that
// are both (params, templates, contract, expert) mean the component, as they always did.
std::vector<std::string> PromptBuilder::components_of(const std::string& tag) const {
  const auto& tags = m_config["tags"];
  if (tags.contains(tag)) return tags[tag].get<std::vector<std::string>>();
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= tag.size()) {
    std::size_t end = std::min(tag.find('+', start), tag.size());
    std::string part = tag.substr(start, end - start);
    if (is_component(part)) {
      out.push_back(part);
    } else if (tags.contains(part)) {
      for (const auto& c : tags[part]) out.push_back(c.get<std::string>());
    } else {
      throw InputError(kLib, "unknown prompt tag '" + tag + "' (tags: " + joined(tag_names()) +
                                 "; or components and tags joined by '+'; components: " +
                                 joined(std::vector<std::string>(std::begin(kComponents), std::end(kComponents))) + ")");
    }
    start = end + 1;
  }
  return out;
}

Prompt PromptBuilder::build(const Definition& def, const ResolvedWorkload& w, const std::string& tag,
                            const std::string& target_name) const {
  if (!m_config["targets"].contains(target_name))
    throw InputError(kLib, "no knowledge pack for target '" + target_name + "' (targets: " + joined(target_names()) + ")");
  const auto& target = m_config["targets"][target_name];
  const std::vector<std::string> chosen = components_of(tag);
  Prompt p;
  p.tag = tag;
  p.arch = target.value("arch", target_name);
  p.target = target_name;
  p.language = prompt_tag_language(tag);
  const bool triton = p.language == CandidateLanguage::triton;
  const std::string pack = target.at("pack").get<std::string>();
  PackKnowledge k{m_root, m_config, def, target, p.arch, pack, m_root / "knowledge" / pack,
                  std::set<std::string>(chosen.begin(), chosen.end()), triton, nullptr, p.components};
  check_language(tag, k.want, triton);
  k.tokenizer = default_tokenizer(m_root);
  p.token_counter = k.tokenizer ? k.tokenizer->name() : "estimate";

  add_rules(k);
  add_abi(k);
  add_params_and_templates(k);
  if (k.want.count("contract")) k.add("contract", "knowledge/" + k.pack + "/contract.md", read_file(k.pack_dir / "contract.md"));
  add_pattern_notes(k);
  add_expert_and_guidance(k);
  add_triton_guide(k);
  for (const auto& c : p.components) p.system += (p.system.empty() ? "" : "\n") + c.text;
  k.add("task", fs::relative(def.source, m_root).string(), task_text(def, w, triton));
  p.user = p.components.back().text;
  return p;
}

}  // namespace ptxbench

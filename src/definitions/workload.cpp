#include "definitions/workload.h"

#include <algorithm>

#include "common/error.h"
#include "common/json_check.h"

namespace ptxbench {

bool Workload::is_default() const {
  return std::find(tags.begin(), tags.end(), "default") != tags.end();
}

std::string Workload::label(const Definition& def) const {
  std::string out;
  for (const auto& a : def.axes) {
    auto it = axes.find(a.name);
    if (it == axes.end()) continue;
    out += (out.empty() ? "" : ",") + a.name + "=" + std::to_string(it->second);
  }
  return out.empty() ? "(no var axes)" : out;
}

std::string workload_definition_name(const std::string& line, const std::string& document) {
  JsonChecker check(document);
  ordered_json j = check.parse(line);
  return check.string_field(j, "", "definition");
}

Workload parse_workload(const std::string& line, const std::string& document, const Definition& def) {
  JsonChecker check(document);
  ordered_json j = check.parse(line);
  check.require_object(j, "");
  const ordered_json* body = &j;
  std::string base;
  if (j.contains("workload")) {
    check.only_fields(j, "", {"definition", "workload", "solution", "evaluation"});
    body = &j["workload"];
    base = "workload";
    check.only_fields(*body, base, {"uuid", "axes", "inputs", "tags"});
  } else {
    check.only_fields(j, "", {"definition", "uuid", "axes", "inputs", "tags"});
  }
  Workload w;
  w.source = document;
  w.definition = check.string_field(j, "", "definition");
  if (w.definition != def.name)
    check.fail("definition", "names '" + w.definition + "', expected '" + def.name + "'");
  w.uuid = check.string_field(*body, base, "uuid");
  if (w.uuid.empty()) check.fail(JsonChecker::join(base, "uuid"), "must not be empty");

  std::string apath = JsonChecker::join(base, "axes");
  const auto& axes = check.member(*body, base, "axes");
  check.require_object(axes, apath);
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    std::string path = JsonChecker::join(apath, it.key());
    const Axis* a = def.find_axis(it.key());
    if (!a) check.fail(path, "no such axis in definition " + def.name);
    if (a->is_const) check.fail(path, "axis is const in the definition; a workload sets var axes only");
    if (!it.value().is_number_integer() || it.value().get<int64_t>() <= 0)
      check.fail(path, "expected a positive integer, got " + it.value().dump());
    w.axes[it.key()] = it.value().get<int64_t>();
  }
  for (const auto& a : def.axes)
    if (!a.is_const && !w.axes.count(a.name))
      check.fail(JsonChecker::join(apath, a.name), "missing value for var axis");

  if (body->contains("inputs")) {
    std::string ipath = JsonChecker::join(base, "inputs");
    const auto& inputs = (*body)["inputs"];
    check.require_object(inputs, ipath);
    for (auto it = inputs.begin(); it != inputs.end(); ++it) {
      std::string path = JsonChecker::join(ipath, it.key());
      bool known = std::any_of(def.inputs.begin(), def.inputs.end(),
                               [&](const TensorDecl& t) { return t.name == it.key(); });
      if (!known) check.fail(path, "no such input in definition " + def.name);
      check.only_fields(it.value(), path, {"type", "value"});
      InputSampler s;
      s.kind = check.string_field(it.value(), path, "type");
      if (s.kind == "scalar") {
        s.value = check.number_field(it.value(), path, "value");
      } else if (s.kind != "random" && s.kind != "derived") {
        check.fail(path + ".type",
                   "unsupported input type '" + s.kind + "' (random, scalar, derived)");
      }
      w.inputs[it.key()] = s;
    }
  }
  for (const auto& t : def.inputs)
    if (!w.inputs.count(t.name)) w.inputs[t.name] = InputSampler{};
  if (body->contains("tags")) {
    const auto& tags = (*body)["tags"];
    if (!tags.is_array()) check.fail(JsonChecker::join(base, "tags"), "expected an array of strings");
    for (const auto& t : tags) {
      if (!t.is_string()) check.fail(JsonChecker::join(base, "tags"), "expected an array of strings");
      w.tags.push_back(t.get<std::string>());
    }
  }
  return w;
}

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::size_t TensorSpec::bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }

std::string TensorSpec::shape_text() const {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t ResolvedWorkload::axis(const std::string& name) const {
  auto it = axis_values.find(name);
  PTXB_ENSURE(it != axis_values.end(), "definitions", "no axis " + name);
  return it->second;
}

const TensorSpec& ResolvedWorkload::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return t;
  throw Error("definitions", "no tensor " + name);
}

ResolvedWorkload resolve_workload(const Definition& def, const Workload& w) {
  ResolvedWorkload r;
  r.definition = &def;
  r.workload = w;
  for (const auto& a : def.axes) {
    if (a.is_const) {
      r.axis_values[a.name] = *a.value;
    } else {
      auto it = w.axes.find(a.name);
      if (it == w.axes.end())
        throw InputError("definitions", w.source + ": workload sets no value for axis " + a.name);
      r.axis_values[a.name] = it->second;
    }
  }
  auto add = [&](const TensorDecl& d, bool is_output) {
    TensorSpec t;
    t.name = d.name;
    t.dtype = d.dtype;
    t.is_output = is_output;
    for (const auto& axis : d.shape) t.shape.push_back(r.axis_values.at(axis));
    t.strides.assign(t.shape.size(), 1);
    for (int i = static_cast<int>(t.shape.size()) - 2; i >= 0; --i)
      t.strides[i] = t.strides[i + 1] * t.shape[i + 1];
    r.tensors.push_back(std::move(t));
  };
  for (const auto& d : def.inputs) add(d, false);
  for (const auto& d : def.outputs) add(d, true);
  return r;
}

}  // namespace ptxbench

#include "definitions/definition.h"

#include <set>

#include "common/json_check.h"

namespace ptxbench {
namespace {

constexpr int kMaxRank = 8;  // ptxb_tensor holds 8 dimensions

bool valid_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::vector<std::string> string_list(const JsonChecker& check, const ordered_json& j,
                                     const std::string& path) {
  if (!j.is_array()) check.fail(path, "expected an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) check.fail(path + "[" + std::to_string(i) + "]", "expected a string");
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

std::vector<TensorDecl> parse_tensors(const JsonChecker& check, const ordered_json& j,
                                      const std::string& path, const Definition& def) {
  check.require_object(j, path);
  std::vector<TensorDecl> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string tpath = JsonChecker::join(path, it.key());
    if (!valid_identifier(it.key())) check.fail(tpath, "tensor names are identifiers");
    check.only_fields(it.value(), tpath, {"shape", "dtype", "description"});
    TensorDecl t;
    t.name = it.key();
    const auto& shape = check.member(it.value(), tpath, "shape");
    if (shape.is_null()) {
      t.is_scalar = true;
    } else {
      if (!shape.is_array()) check.fail(tpath + ".shape", "expected an array of axis names or null");
      if (shape.size() > kMaxRank)
        check.fail(tpath + ".shape", "rank " + std::to_string(shape.size()) + " exceeds 8");
      for (std::size_t i = 0; i < shape.size(); ++i) {
        std::string spath = tpath + ".shape[" + std::to_string(i) + "]";
        if (!shape[i].is_string()) check.fail(spath, "expected an axis name, got " + shape[i].dump());
        std::string axis = shape[i].get<std::string>();
        if (!def.find_axis(axis)) {
          std::string names;
          for (const auto& a : def.axes) names += (names.empty() ? "" : ", ") + a.name;
          check.fail(spath, "unknown axis '" + axis + "' (axes: " + names + ")");
        }
        t.shape.push_back(axis);
      }
    }
    std::string dtype = check.string_field(it.value(), tpath, "dtype");
    auto parsed = parse_dtype(dtype);
    if (!parsed)
      check.fail(tpath + ".dtype", "unknown dtype '" + dtype +
                                       "' (bfloat16, float16, float32, int32, int64, float8_e4m3fn)");
    t.dtype = *parsed;
    t.description = check.optional_string(it.value(), tpath, "description", "");
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

const Axis* Definition::find_axis(const std::string& axis) const {
  for (const auto& a : axes)
    if (a.name == axis) return &a;
  return nullptr;
}

Definition parse_definition(const std::string& text, const std::string& document) {
  JsonChecker check(document);
  ordered_json j = check.parse(text);
  check.only_fields(j, "", {"name", "op_type", "description", "tags", "axes", "constraints",
                            "inputs", "outputs", "reference", "tolerance"});
  Definition def;
  def.source = document;
  def.name = check.string_field(j, "", "name");
  if (!valid_identifier(def.name)) check.fail("name", "must be letters, digits and '_'");
  def.op_type = check.string_field(j, "", "op_type");
  def.description = check.optional_string(j, "", "description", "");
  if (j.contains("tags")) def.tags = string_list(check, j["tags"], "tags");
  if (j.contains("constraints")) def.constraints = string_list(check, j["constraints"], "constraints");
  def.reference = check.string_field(j, "", "reference");
  if (j.contains("tolerance")) {
    const auto& t = j["tolerance"];
    check.require_object(t, "tolerance");
    check.only_fields(t, "tolerance", {"atol", "rtol", "required_matched_ratio", "outlier_atol", "outlier_rtol"});
    ToleranceOverride o;
    auto number = [&](const char* key, std::optional<double>& out, double low, double high) {
      if (!t.contains(key)) return;
      if (!t[key].is_number()) check.fail(std::string("tolerance.") + key, "must be a number");
      double v = t[key].get<double>();
      if (!(v > low && v <= high)) check.fail(std::string("tolerance.") + key, "out of range");
      out = v;
    };
    number("atol", o.atol, 0.0, 1.0);
    number("rtol", o.rtol, 0.0, 1.0);
    number("required_matched_ratio", o.required_matched_ratio, 0.99, 1.0);
    number("outlier_atol", o.outlier_atol, 0.0, 1.0);
    number("outlier_rtol", o.outlier_rtol, 0.0, 1.0);
    if (o.required_matched_ratio && *o.required_matched_ratio < 1.0 && !(o.outlier_atol && o.outlier_rtol))
      check.fail("tolerance", "a required_matched_ratio below 1 needs outlier_atol and outlier_rtol: every element stays bounded");
    def.tolerance = o;
  }

  const auto& axes = check.member(j, "", "axes");
  check.require_object(axes, "axes");
  if (axes.empty()) check.fail("axes", "a definition needs at least one axis");
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    std::string apath = "axes." + it.key();
    if (!valid_identifier(it.key())) check.fail(apath, "axis names are identifiers");
    check.only_fields(it.value(), apath, {"type", "value", "description"});
    Axis a;
    a.name = it.key();
    std::string type = check.string_field(it.value(), apath, "type");
    if (type == "const") {
      a.is_const = true;
      a.value = check.int_field(it.value(), apath, "value");
      if (*a.value <= 0) check.fail(apath + ".value", "must be positive");
    } else if (type == "var") {
      if (it.value().contains("value")) check.fail(apath + ".value", "a var axis has no value");
    } else {
      check.fail(apath + ".type", "must be \"const\" or \"var\", got \"" + type + "\"");
    }
    a.description = check.optional_string(it.value(), apath, "description", "");
    def.axes.push_back(std::move(a));
  }

  def.inputs = parse_tensors(check, check.member(j, "", "inputs"), "inputs", def);
  def.outputs = parse_tensors(check, check.member(j, "", "outputs"), "outputs", def);
  if (def.outputs.empty()) check.fail("outputs", "a definition needs at least one output");
  std::set<std::string> names;
  for (const auto* list : {&def.inputs, &def.outputs})
    for (const auto& t : *list)
      if (!names.insert(t.name).second) check.fail("outputs." + t.name, "tensor name used twice");
  def.json_text = j.dump(2);
  return def;
}

}  // namespace ptxbench

#include "suite/candidate_suite.h"

#include "common/error.h"

namespace ptxbench {
namespace {

std::optional<bool> optional_bool(const JsonChecker& check, const ordered_json& j, const std::string& path,
                                  const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return check.bool_field(j, path, key);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

CandidateSuite load_suite(const fs::path& suite_file) {
  JsonChecker check(suite_file.string());
  ordered_json j = check.parse(read_file(suite_file));
  check.only_fields(j, "", {"definition", "description", "cases"});
  CandidateSuite suite;
  suite.definition = check.string_field(j, "", "definition");
  suite.description = check.optional_string(j, "", "description", "");
  const auto& cases = check.member(j, "", "cases");
  if (!cases.is_array() || cases.empty()) check.fail("cases", "expected a non-empty array");
  fs::path dir = suite_file.parent_path();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::string path = "cases[" + std::to_string(i) + "]";
    const auto& c = cases[i];
    check.only_fields(c, path, {"name", "description", "language", "file", "base", "edits", "expect"});
    SuiteCase out;
    out.name = check.string_field(c, path, "name");
    out.description = check.optional_string(c, path, "description", "");
    bool has_file = c.contains("file"), has_base = c.contains("base");
    if (has_file == has_base) check.fail(path, "give exactly one of \"file\" and \"base\"");
    out.language = language_of_path(check.string_field(c, path, has_file ? "file" : "base"));
    if (c.contains("language")) out.language = check.enum_field(c, path, "language", parse_candidate_language);
    if (has_file) {
      out.origin = check.string_field(c, path, "file");
      out.source = read_file(dir / out.origin);
      if (c.contains("edits")) check.fail(path + ".edits", "edits apply to a \"base\", not a \"file\"");
    } else {
      std::string base = check.string_field(c, path, "base");
      std::string text = read_file(dir / base);
      const auto& edits = check.member(c, path, "edits");
      if (!edits.is_array() || edits.empty()) check.fail(path + ".edits", "expected a non-empty array");
      for (std::size_t e = 0; e < edits.size(); ++e) {
        std::string epath = path + ".edits[" + std::to_string(e) + "]";
        check.only_fields(edits[e], epath, {"find", "replace"});
        std::string find = check.string_field(edits[e], epath, "find");
        std::string replace = check.string_field(edits[e], epath, "replace");
        std::size_t n = count_of(text, find);
        if (n != 1) check.fail(epath + ".find", "matches " + std::to_string(n) + " times in " + base + "; it must match once");
        text.replace(text.find(find), find.size(), replace);
      }
      out.origin = base + " + " + std::to_string(edits.size()) + (edits.size() == 1 ? " edit" : " edits");
      const char* comment = out.language == CandidateLanguage::triton ? "# " : "// ";
      out.source = comment + ("ptxbench suite case " + out.name + " (" + out.origin + "): " + out.description) + "\n" +
                   text;
    }
    const auto& e = check.member(c, path, "expect");
    std::string epath = path + ".expect";
    check.only_fields(e, epath, {"status", "static_hgmma", "c_gen4", "d_tma", "strict_target", "speedup_below",
                                 "message_contains"});
    out.expect.status = check.enum_field(e, epath, "status", status_from_name);
    out.expect.static_hgmma = optional_bool(check, e, epath, "static_hgmma");
    out.expect.c_gen4 = optional_bool(check, e, epath, "c_gen4");
    out.expect.d_tma = optional_bool(check, e, epath, "d_tma");
    out.expect.strict_target = optional_bool(check, e, epath, "strict_target");
    if (e.contains("speedup_below")) out.expect.speedup_below = check.number_field(e, epath, "speedup_below");
    if (e.contains("message_contains")) out.expect.message_contains = check.string_field(e, epath, "message_contains");
    for (const auto& other : suite.cases)
      if (other.name == out.name) check.fail(path + ".name", "case name '" + out.name + "' used twice");
    suite.cases.push_back(std::move(out));
  }
  return suite;
}

std::vector<std::string> expectation_mismatches(const SuiteExpectation& expect, const Verdict& v) {
  std::vector<std::string> out;
  if (v.status != expect.status) out.push_back("status " + to_string(v.status) + ", expected " + to_string(expect.status));
  if (const auto& s = v.stages.static_sass; expect.static_hgmma && s && s->available) {
    bool has = s->counts.gmma > 0;
    if (has != *expect.static_hgmma) out.push_back(std::string("static HGMMA ") + (has ? "present" : "absent"));
  }
  if (v.status == Status::PASSED && expect.status == Status::PASSED) {
    auto check = [&](const std::optional<bool>& want, bool Mechanisms::*flag, const char* label) {
      if (!want) return;
      if (!v.runtime_mechanisms) out.push_back(std::string(label) + " not measured");
      else if ((*v.runtime_mechanisms).*flag != *want)
        out.push_back(std::string(label) + ((*v.runtime_mechanisms).*flag ? " executed" : " not executed"));
    };
    check(expect.c_gen4, &Mechanisms::c_gen4, "C_Gen4 (wgmma)");
    check(expect.d_tma, &Mechanisms::d_tma, "D_TMA");
    if (expect.strict_target && v.target_instruction_strict != *expect.strict_target)
      out.push_back(std::string("strict target rule ") + (v.target_instruction_strict ? "met" : "not met"));
    if (expect.speedup_below && v.speedup && *v.speedup >= *expect.speedup_below)
      out.push_back("speedup " + std::to_string(*v.speedup) + ", expected below " + std::to_string(*expect.speedup_below));
  }
  if (!expect.message_contains.empty() && v.message.find(expect.message_contains) == std::string::npos)
    out.push_back("message lacks '" + expect.message_contains + "'");
  return out;
}

}  // namespace ptxbench

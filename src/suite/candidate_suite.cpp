#include "suite/candidate_suite.h"

#include <algorithm>

#include "common/error.h"
#include "compile/solution.h"

namespace ptxbench {
namespace {

std::optional<bool> optional_bool(const JsonChecker& check, const ordered_json& j, const std::string& path,
                                  const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return check.bool_field(j, path, key);
}

// The other statuses an expectation takes: each must charge the candidate, so a suite cannot
// accept our own failure (INFRA_ERROR) or a pass as one of a cheat's outcomes.
std::vector<Status> also_accepted(const JsonChecker& check, const ordered_json& e, const std::string& path) {
  std::vector<Status> out;
  std::string field = JsonChecker::join(path, "also_accepted");
  for (const std::string& name : check.string_list(e, path, "also_accepted")) {
    Status s;
    try {
      s = status_from_name(name);
    } catch (const InputError& err) {
      check.fail(field, JsonChecker::message_of(err));
    }
    if (s == Status::INFRA_ERROR || s == Status::PASSED)
      check.fail(field, to_string(s) + " cannot be an also-accepted status: it does not charge the candidate");
    out.push_back(s);
  }
  return out;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// A file a case names, relative to the suite's folder. It may sit in a folder beside the suite's (a
// TVM-FFI variant edits ../gemm/wgmma_tma_gemm.cu, so no kernel is copied between fixture folders) but
// never above the suite's parent folder: a suite cannot pull an arbitrary host file into a candidate.
fs::path case_path(const JsonChecker& check, const fs::path& suite_dir, const std::string& field,
                   const std::string& name) {
  if (name.empty() || fs::path(name).is_absolute()) check.fail(field, "expected a path relative to the suite's folder");
  const fs::path root = suite_dir.parent_path();
  const fs::path file = fs::weakly_canonical(suite_dir / name);
  const fs::path inside = file.lexically_relative(root);
  if (inside.empty() || *inside.begin() == "..")
    check.fail(field, "'" + name + "' is outside " + root.string() + " (the suite's folder and the folders beside it)");
  return file;
}

// `text` with the case's "edits" applied in order; each must match exactly once in `what`.
std::string apply_edits(const JsonChecker& check, const ordered_json& c, const std::string& path, std::string text,
                        const std::string& what) {
  const auto& edits = check.member(c, path, "edits");
  if (!edits.is_array() || edits.empty()) check.fail(path + ".edits", "expected a non-empty array");
  for (std::size_t e = 0; e < edits.size(); ++e) {
    std::string epath = path + ".edits[" + std::to_string(e) + "]";
    check.only_fields(edits[e], epath, {"find", "replace"});
    std::string find = check.string_field(edits[e], epath, "find");
    std::string replace = check.string_field(edits[e], epath, "replace");
    std::size_t n = count_of(text, find);
    if (n != 1) check.fail(epath + ".find", "matches " + std::to_string(n) + " times in " + what + "; it must match once");
    text.replace(text.find(find), find.size(), replace);
  }
  return text;
}

std::string edits_label(const ordered_json& c) {
  const std::size_t n = c["edits"].size();
  return std::to_string(n) + (n == 1 ? " edit" : " edits");
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
  // Canonical, so that a "../" in a case's path is judged against the real parent folder.
  const fs::path dir = fs::weakly_canonical(fs::absolute(suite_file)).parent_path();
  std::vector<std::string> texts;  // each case's candidate without the line naming an edited case's origin
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::string path = "cases[" + std::to_string(i) + "]";
    const auto& c = cases[i];
    check.only_fields(c, path, {"name", "description", "language", "file", "base", "base_case", "edits", "expect"});
    SuiteCase out;
    out.name = check.string_field(c, path, "name");
    out.description = check.optional_string(c, path, "description", "");
    const bool has_file = c.contains("file"), has_base = c.contains("base"), has_base_case = c.contains("base_case");
    if (int{has_file} + int{has_base} + int{has_base_case} != 1)
      check.fail(path, "give exactly one of \"file\", \"base\" and \"base_case\"");
    std::optional<CandidateLanguage> declared;
    if (c.contains("language")) declared = check.enum_field(c, path, "language", parse_candidate_language);
    std::string text;
    if (has_file) {
      out.origin = check.string_field(c, path, "file");
      if (c.contains("edits")) check.fail(path + ".edits", "edits apply to a \"base\" or a \"base_case\", not a \"file\"");
      const fs::path file = case_path(check, dir, path + ".file", out.origin);
      out.language = language_of_path(file);
      // A FlashInfer-Bench Solution (.json) stands for the file it makes (compile/solution.h).
      CandidateFile candidate = read_candidate_file(file);
      if (candidate.solution) {
        require_solution_definition(*candidate.solution, suite.definition, file.string());
        if (declared) check.fail(path + ".language", "a solution's language is its spec.language");
        out.language = candidate.language;
      }
      text = std::move(candidate.source);
    } else if (has_base) {
      std::string base = check.string_field(c, path, "base");
      if (fs::path(base).extension() == ".json") check.fail(path + ".base", "edits apply to .cu and .py files");
      const fs::path file = case_path(check, dir, path + ".base", base);
      out.language = language_of_path(file);
      text = apply_edits(check, c, path, read_file(file), base);
      out.origin = base + " + " + edits_label(c);
    } else {
      // An edit of an earlier case: variants of an edited kernel state only their own change.
      std::string name = check.string_field(c, path, "base_case");
      std::size_t b = 0;
      while (b < suite.cases.size() && suite.cases[b].name != name) ++b;
      if (b == suite.cases.size()) check.fail(path + ".base_case", "no earlier case named '" + name + "'");
      out.language = suite.cases[b].language;
      text = apply_edits(check, c, path, texts[b], "case " + name);
      out.origin = "case " + name + " + " + edits_label(c);
    }
    if (declared) out.language = *declared;
    if (has_file) {
      out.source = text;
    } else {
      const char* comment = out.language == CandidateLanguage::triton ? "# " : "// ";
      out.source = comment + ("ptxbench suite case " + out.name + " (" + out.origin + "): " + out.description) + "\n" +
                   text;
    }
    const auto& e = check.member(c, path, "expect");
    std::string epath = path + ".expect";
    check.only_fields(e, epath, {"status", "also_accepted", "static_hgmma", "c_gen4", "d_tma", "strict_target", "target",
                                 "speedup_below", "message_contains"});
    out.expect.status = check.enum_field(e, epath, "status", status_from_name);
    if (e.contains("also_accepted")) out.expect.also_accepted = also_accepted(check, e, epath);
    out.expect.static_hgmma = optional_bool(check, e, epath, "static_hgmma");
    out.expect.c_gen4 = optional_bool(check, e, epath, "c_gen4");
    out.expect.d_tma = optional_bool(check, e, epath, "d_tma");
    out.expect.strict_target = optional_bool(check, e, epath, "strict_target");
    out.expect.target = optional_bool(check, e, epath, "target");
    if (e.contains("speedup_below")) out.expect.speedup_below = check.number_field(e, epath, "speedup_below");
    if (e.contains("message_contains")) out.expect.message_contains = check.string_field(e, epath, "message_contains");
    for (const auto& other : suite.cases)
      if (other.name == out.name) check.fail(path + ".name", "case name '" + out.name + "' used twice");
    suite.cases.push_back(std::move(out));
    texts.push_back(std::move(text));
  }
  return suite;
}

const SuiteCase& CandidateSuite::case_named(const std::string& name) const {
  for (const auto& c : cases)
    if (c.name == name) return c;
  throw InputError("suite", "no case '" + name + "' in the suite of " + definition);
}

std::vector<std::string> expectation_mismatches(const SuiteExpectation& expect, const Verdict& v) {
  std::vector<std::string> out;
  bool accepted = v.status == expect.status || std::ranges::find(expect.also_accepted, v.status) != expect.also_accepted.end();
  if (!accepted) out.push_back("status " + to_string(v.status) + ", expected " + to_string(expect.status));
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
    if (expect.target && v.target_instruction_correct != *expect.target)
      out.push_back(std::string("target-instruction rule ") + (v.target_instruction_correct ? "met" : "not met"));
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

#include "adapt/data_recipe.h"

#include <algorithm>
#include <set>

#include "common/sha256.h"
#include "definitions/catalog.h"

namespace ptxbench {
namespace {

constexpr int64_t kMaxTurn = std::numeric_limits<int64_t>::max();

std::vector<std::string> string_or_list(const JsonChecker& check, const ordered_json& j, const char* key,
                                        std::string& name, std::initializer_list<const char*> names) {
  const auto& v = j[key];
  if (v.is_string()) {
    name = v.get<std::string>();
    for (const char* n : names)
      if (name == n) return {};
    std::string list;
    for (const char* n : names) list += (list.empty() ? "\"" : ", \"") + std::string(n) + "\"";
    check.fail(key, "expected a list of names or one of " + list + ", got \"" + name + "\"");
  }
  if (!v.is_array()) check.fail(key, std::string("expected a list of names, got ") + v.type_name());
  name.clear();
  auto out = check.string_list(j, "", key);
  if (out.empty()) check.fail(key, "name at least one");
  std::set<std::string> seen;
  for (const auto& s : out)
    if (!seen.insert(s).second) check.fail(key, "'" + s + "' is listed twice");
  return out;
}

// "all", "paper-hopper", a set of definitions/problem_sets.json, or a list of definitions.
std::vector<std::string> problem_set_of(const JsonChecker& check, const ordered_json& j, std::string& name) {
  const auto& v = j["problem_set"];
  if (v.is_string() && v.get<std::string>() != kAllProblems && v.get<std::string>() != kPaperHopperSet) {
    name = v.get<std::string>();
    if (auto set = find_problem_set(data_root(), name)) return *set;
    check.fail("problem_set", "expected a list of names, \"all\", \"paper-hopper\" or a set of " +
                                  (data_root() / "definitions" / Catalog::kProblemSetsFile).string() + ", got \"" + name + "\"");
  }
  auto out = string_or_list(check, j, "problem_set", name, {kAllProblems, kPaperHopperSet});
  return name == kPaperHopperSet ? paper_hopper_definitions() : out;
}

void read_fix_fields(const JsonChecker& check, const ordered_json& j, DataRecipe& r) {
  const bool fixit = r.kind == RecordKind::fixit;
  if (j.contains("pairs_from")) {
    if (!fixit) check.fail("pairs_from", "only for kind fixit");
    r.pairs_from = check.enum_field(j, "", "pairs_from", parse_pair_source);
  }
  if (!j.contains("fixes")) return;
  if (!fixit) check.fail("fixes", "only for kind fixit");
  const auto& f = j["fixes"];
  check.only_fields(f, "fixes", {"target_instruction", "min_speedup"});
  if (f.contains("target_instruction")) r.fixes.require_target_instruction = check.bool_field(f, "fixes", "target_instruction");
  if (f.contains("min_speedup")) r.fixes.min_speedup = check.number_in(f, "fixes", "min_speedup", 0.0, 1e9);
}

void read_balance(const JsonChecker& check, const ordered_json& b, DataRecipe& r) {
  check.only_fields(b, "balance", {"mode", "cap_per_stratum", "strata", "keep"});
  r.balance = check.enum_field(b, "balance", "mode", parse_balance_mode);
  if (r.balance == BalanceMode::none) {
    for (const char* key : {"cap_per_stratum", "strata", "keep"})
      if (b.contains(key)) check.fail(std::string("balance.") + key, "only with mode pre or post");
    return;
  }
  if (!b.contains("cap_per_stratum")) check.fail("balance.cap_per_stratum", "required with mode pre or post");
  r.cap_per_stratum = check.int_in(b, "balance", "cap_per_stratum", 1, 1000000000);
  if (b.contains("strata")) r.balance_strata = check.enum_field(b, "balance", "strata", parse_balance_strata);
  if (b.contains("keep")) r.balance_keep = check.enum_field(b, "balance", "keep", parse_balance_keep);
  if (r.balance_keep == BalanceKeep::fastest && (r.kind != RecordKind::fixit || r.balance != BalanceMode::post))
    check.fail("balance.keep", "\"fastest\" ranks pairs by their fix's speedup: only with kind fixit and mode post");
}

}  // namespace

const std::vector<std::string>& paper_hopper_definitions() {
  static const std::vector<std::string> kDefs = {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal",
                                                 "mha_bwd_d128", "mha_bwd_d128_causal"};
  return kDefs;
}

std::optional<std::vector<std::string>> DataRecipe::definitions() const {
  if (problem_set_name == kAllProblems) return std::nullopt;
  return problem_set;
}

ordered_json DataRecipe::to_json() const {
  ordered_json j = {{"name", name}, {"kind", ptxbench::to_string(kind)}};
  j["runs"] = all_runs ? ordered_json(kAllRuns) : ordered_json(runs);
  j["problem_set"] = problem_set_name.empty() ? ordered_json(problem_set) : ordered_json(problem_set_name);
  j["held_out"] = held_out;
  ordered_json turns = {{"from", turn_from}};
  if (turn_to != kMaxTurn) turns["to"] = turn_to;
  j["turns"] = turns;
  if (kind == RecordKind::fixit) {
    ordered_json l = ordered_json::array();
    for (auto label : labels) l.push_back(report::label_key(label));
    j["labels"] = l;
  }
  if (kind == RecordKind::fixit) {
    j["pairs_from"] = ptxbench::to_string(pairs_from);
    ordered_json f = {{"target_instruction", fixes.require_target_instruction}};
    if (fixes.min_speedup) f["min_speedup"] = *fixes.min_speedup;
    j["fixes"] = f;
  }
  ordered_json b = {{"mode", ptxbench::to_string(balance)}};
  if (cap_per_stratum) {
    b["cap_per_stratum"] = *cap_per_stratum;
    b["strata"] = ptxbench::to_string(balance_strata);
    b["keep"] = ptxbench::to_string(balance_keep);
  }
  j["balance"] = b;
  j["teacher"] = teacher ? teacher->to_json() : ordered_json(nullptr);
  if (teacher) j["reasoning"] = reasoning.to_json();
  j["shuffle_seed"] = shuffle_seed;
  j["split"] = {{"eval_fraction", eval_fraction}};
  j["allow_fake_verdicts"] = allow_fake_verdicts;
  if (!notes.empty()) j["notes"] = notes;
  return j;
}

std::string DataRecipe::sha256() const { return sha256_hex(to_json().dump()); }

DataRecipe data_recipe_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.require_object(j, "");
  check.only_fields(j, "", {"name", "kind", "runs", "problem_set", "held_out", "turns", "labels", "pairs_from", "fixes",
                            "balance", "teacher", "reasoning", "shuffle_seed", "split", "allow_fake_verdicts", "notes"});
  DataRecipe r;
  r.name = check.string_field(j, "", "name");
  if (r.name.empty()) check.fail("name", "must not be empty");
  r.kind = check.enum_field(j, "", "kind", parse_record_kind);

  if (!j.contains("runs")) check.fail("runs", "required: a list of run ids, or \"all\"");
  std::string runs_name;
  r.runs = string_or_list(check, j, "runs", runs_name, {kAllRuns});
  r.all_runs = runs_name == kAllRuns;

  r.held_out = check.string_list(j, "", "held_out");
  if (j.contains("problem_set")) r.problem_set = problem_set_of(check, j, r.problem_set_name);
  // The guard at the door: a recipe cannot even name a held-out definition for training.
  for (const auto& d : r.problem_set)
    if (std::find(r.held_out.begin(), r.held_out.end(), d) != r.held_out.end())
      check.fail("problem_set", "'" + d + "' is held out (held_out): a held-out definition can never enter a training set");

  if (j.contains("turns")) {
    const auto& t = j["turns"];
    check.only_fields(t, "turns", {"from", "to"});
    if (t.contains("from")) r.turn_from = check.int_in(t, "turns", "from", 0, 1000000);
    if (t.contains("to")) r.turn_to = check.int_in(t, "turns", "to", r.turn_from, 1000000);
  }

  if (j.contains("labels")) {
    if (r.kind != RecordKind::fixit) check.fail("labels", "only for kind fixit (kernelgen takes correct turns)");
    auto names = check.string_list(j, "", "labels");
    if (names.empty()) check.fail("labels", "name at least one failure label");
    r.labels.clear();
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::string path = "labels[" + std::to_string(i) + "]";
      report::TurnLabel l;
      try {
        l = parse_label_key(names[i]);
      } catch (const InputError& e) {
        check.fail(path, JsonChecker::message_of(e));
      }
      if (!is_failure_label(l)) check.fail(path, "'" + names[i] + "' is no failure of the model's to repair");
      if (std::find(r.labels.begin(), r.labels.end(), l) != r.labels.end()) check.fail(path, "listed twice");
      r.labels.push_back(l);
    }
  }

  read_fix_fields(check, j, r);
  if (j.contains("balance")) read_balance(check, j["balance"], r);

  if (j.contains("teacher") && !j["teacher"].is_null()) r.teacher = model_config_from_json(j["teacher"], document + ": teacher");
  if (j.contains("reasoning")) {
    if (!r.teacher) check.fail("reasoning", "only with a teacher");
    const auto& s = j["reasoning"];
    check.only_fields(s, "reasoning", {"min_chars", "max_chars", "attempts", "concurrency"});
    if (s.contains("min_chars")) r.reasoning.min_chars = static_cast<std::size_t>(check.int_in(s, "reasoning", "min_chars", 0, 10000000));
    if (s.contains("max_chars"))
      r.reasoning.max_chars = static_cast<std::size_t>(
          check.int_in(s, "reasoning", "max_chars", std::max<int64_t>(1, static_cast<int64_t>(r.reasoning.min_chars)), 10000000));
    if (r.reasoning.max_chars < r.reasoning.min_chars)
      check.fail("reasoning.max_chars", "must be at least min_chars (" + std::to_string(r.reasoning.min_chars) + ")");
    if (s.contains("attempts")) r.reasoning.attempts = static_cast<int>(check.int_in(s, "reasoning", "attempts", 1, 10));
    if (s.contains("concurrency")) r.reasoning.concurrency = static_cast<int>(check.int_in(s, "reasoning", "concurrency", 1, 256));
  }

  if (!j.contains("shuffle_seed")) check.fail("shuffle_seed", "required: the seed of every random choice (balance, split, order)");
  r.shuffle_seed = static_cast<uint64_t>(check.int_in(j, "", "shuffle_seed", 0, std::numeric_limits<int64_t>::max()));

  if (j.contains("split")) {
    const auto& s = j["split"];
    check.only_fields(s, "split", {"eval_fraction"});
    if (s.contains("eval_fraction")) {
      r.eval_fraction = check.number_in(s, "split", "eval_fraction", 0.0, 1.0);
      if (r.eval_fraction >= 1.0) check.fail("split.eval_fraction", "must be below 1 (something must be left to train on)");
    }
  }
  if (j.contains("allow_fake_verdicts")) r.allow_fake_verdicts = check.bool_field(j, "", "allow_fake_verdicts");
  r.notes = check.optional_string(j, "", "notes", "");
  return r;
}

DataRecipe load_data_recipe(const fs::path& path) {
  JsonChecker check(path.string());
  return data_recipe_from_json(check.parse(read_file(path)), path.string());
}

}  // namespace ptxbench

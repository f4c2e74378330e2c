#include "agent/run_config.h"

#include <algorithm>
#include <limits>

#include "common/enum_names.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "definitions/catalog.h"
#include "prompt/prompt_builder.h"
#include "verdict/status.h"
#include "verdict/verdict.h"

namespace ptxbench {
namespace {

int positive_int(const JsonChecker& check, const ordered_json& j, const char* key, int fallback, int max) {
  return j.contains(key) ? static_cast<int>(check.int_in(j, "", key, 1, max)) : fallback;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr EnumName<ContextPolicy> kContexts[] = {{ContextPolicy::full, "full"}, {ContextPolicy::latest, "latest"}};

RepairNotesConfig repair_notes_from_json(const JsonChecker& check, const ordered_json& j) {
  const std::string path = "repair_notes";
  check.require_object(j, path);
  check.only_fields(j, path, {"mode", "store", "k"});
  RepairNotesConfig r;
  if (!j.contains("mode")) check.fail(path, "needs \"mode\": off, notes or notes+kernel");
  r.mode = check.enum_field(j, path, "mode", parse_notes_mode);
  r.store = check.optional_string(j, path, "store", "");
  if (j.contains("k")) r.k = static_cast<int>(check.int_in(j, path, "k", 1, kMaxRepairNotesK));
  if (r.enabled()) {
    if (r.store.empty()) check.fail("repair_notes.store", "required for mode " + to_string(r.mode) + ": the notes store file");
    std::error_code ec;
    if (!fs::is_regular_file(r.store, ec))
      check.fail("repair_notes.store", "no notes store at '" + r.store + "' (mode " + to_string(r.mode) + " reads it)");
  }
  return r;
}

RepairFromConfig repair_from_from_json(const JsonChecker& check, const ordered_json& j) {
  const std::string path = "repair_from";
  check.require_object(j, path);
  check.only_fields(j, path, {"file", "sha256"});
  std::string file = check.string_field(j, path, "file");
  if (file.empty()) check.fail("repair_from.file", "expected the path of a JSONL file of repair seeds");
  std::string sha = check.optional_string(j, path, "sha256", "");
  try {
    return load_repair_seeds(file, sha);
  } catch (const InputError& e) {
    check.fail("repair_from.file", JsonChecker::message_of(e));
  }
}

// The run's language: the `language` field where given, else the tags' (no tags: the prompt
// builder's default tags, which are CUDA). One language per run: its trajectories share one
// extraction rule and one service route, and the report's per-language table reads it per run.
CandidateLanguage language_from_json(const JsonChecker& check, const ordered_json& j, const std::vector<std::string>& tags) {
  std::vector<std::string> triton, cuda;
  for (const auto& t : tags) (prompt_tag_language(t) == CandidateLanguage::triton ? triton : cuda).push_back(t);
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& t : v) s += (s.empty() ? "" : ", ") + t;
    return s;
  };
  if (!triton.empty() && !cuda.empty())
    check.fail("prompt_tags", "mixes Triton tags (" + list(triton) + ") and CUDA tags (" + list(cuda) +
                                  "): a run has one language; split them into two runs and report both side by side");
  CandidateLanguage derived = triton.empty() ? CandidateLanguage::cuda : CandidateLanguage::triton;
  if (!j.contains("language")) return derived;
  CandidateLanguage language = check.enum_field(j, "", "language", parse_candidate_language);
  if (language == CandidateLanguage::triton && triton.empty())
    check.fail("language", "triton needs Triton prompt tags (triton-hopper, triton-hopper-noguide) in prompt_tags" +
                               std::string(tags.empty() ? " (none given: the default tags are CUDA)" : ", not " + list(cuda)));
  if (language == CandidateLanguage::cuda && !triton.empty())
    check.fail("language", "cuda contradicts the Triton prompt tags " + list(triton));
  return language;
}

}  // namespace

std::string repair_prompt_tag(const std::string& tag) { return tag + std::string(kRepairTagSuffix); }

std::string base_prompt_tag(const std::string& key_tag) {
  std::string_view t(key_tag);
  if (t.size() > kRepairTagSuffix.size() && t.substr(t.size() - kRepairTagSuffix.size()) == kRepairTagSuffix)
    t.remove_suffix(kRepairTagSuffix.size());
  return std::string(t);
}

RepairFromConfig load_repair_seeds(const std::string& file, const std::string& expected_sha256) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw InputError("repair seeds", "no file '" + file + "'");
  RepairFromConfig r;
  r.file = file;
  std::string text = read_file(file);
  r.sha256 = sha256_hex(text);
  if (!expected_sha256.empty() && expected_sha256 != r.sha256)
    throw InputError("repair seeds", file + " changed since the run was started (SHA-256 " + r.sha256 + ", stored " +
                                         expected_sha256 + "): restore that file to resume the run");
  std::size_t start = 0;
  for (int line_no = 1; start < text.size(); ++line_no) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    JsonChecker check(file + ":" + std::to_string(line_no));
    ordered_json j = check.parse(line);
    check.require_object(j, "");
    check.only_fields(j, "", {"definition", "wrong_source", "feedback", "status", "verdict", "origin"});
    RepairSeed s;
    s.definition = check.string_field(j, "", "definition");
    s.wrong_source = check.string_field(j, "", "wrong_source");
    s.feedback = check.string_field(j, "", "feedback");
    s.status = check.string_field(j, "", "status");
    if (s.definition.empty()) check.fail("definition", "expected a definition name");
    if (s.wrong_source.empty()) check.fail("wrong_source", "expected the wrong kernel's source");
    if (s.feedback.empty()) check.fail("feedback", "expected the feedback text the wrong kernel got");
    if (!parse_status(s.status)) check.fail("status", "expected a verdict status name, got '" + s.status + "'");
    if (j.contains("verdict")) {
      Status verdict_status = Status::INFRA_ERROR;
      try {
        verdict_status = Verdict::from_json(j["verdict"]).status;
      } catch (const InputError& e) {
        check.fail("verdict", JsonChecker::message_of(e));
      }
      if (verdict_status != *parse_status(s.status))
        check.fail("verdict", "its status " + to_string(verdict_status) + " is not the seed's status " + s.status);
      s.verdict = j["verdict"];
    }
    if (j.contains("origin")) {
      const auto& o = j["origin"];
      if (!o.is_object()) check.fail("origin", "expected an object (where the seed came from)");
      if (o.contains("run") && !o["run"].is_string()) check.fail("origin.run", "expected the source run's id");
      if (o.contains("trajectory") && !o["trajectory"].is_number_integer()) check.fail("origin.trajectory", "expected an integer");
      if (o.contains("turn") && (!o["turn"].is_number_integer() || o["turn"].get<int64_t>() < 1))
        check.fail("origin.turn", "expected the source turn (an integer, 1..)");
      s.origin = o;
    }
    r.seeds.push_back(std::move(s));
  }
  if (r.seeds.empty()) throw InputError("repair seeds", file + " holds no seed (one JSON object a line)");
  return r;
}

std::string run_notes(const RunConfig& c) {
  std::string notes = c.name;
  auto add = [&](const std::string& part) { notes += (notes.empty() ? "" : " ") + ("[" + part + "]"); };
  if (c.repair_notes.enabled())
    add("repair notes: " + to_string(c.repair_notes.mode) + ", k " + std::to_string(c.repair_notes.k));
  if (c.repair_from)
    add("repair from: " + c.repair_from->file + ", " + std::to_string(c.repair_from->seeds.size()) + " seeds");
  if (!c.workloads.empty()) add("workloads: " + c.workloads.text());
  return notes;
}

std::string to_string(ContextPolicy c) { return enum_name(kContexts, c); }
ContextPolicy parse_context_policy(std::string_view text) { return parse_enum(kContexts, text, "context policy"); }

ordered_json RunConfig::to_json() const {
  ordered_json j = {{"policy", policy}};
  if (model) j["model"] = model->to_json();
  if (policy == "replay") j["replay"] = {{"store", replay_store}, {"run", replay_run}};
  if (!problem_set.empty()) j["problem_set"] = problem_set;
  j["definitions"] = definitions;
  if (!workload.empty()) j["workload"] = workload;
  if (!workloads.empty()) j["workloads"] = ptxbench::to_json(workloads);
  j["prompt_tags"] = prompt_tags;
  j["language"] = to_string(language);
  if (!repair_from) j["trajectories_per_tag"] = trajectories_per_tag;
  j["num_turns"] = num_turns;
  j["target_speedup"] = target_speedup;
  j["concurrency"] = concurrency;
  j["model_concurrency"] = model_concurrency;
  j["context"] = to_string(context);
  j["service"] = service;
  if (!service_token_file.empty()) j["service_token_file"] = service_token_file;
  j["eval_options"] = eval_options;
  j["eval_timeout_s"] = eval_timeout_s;
  j["infra_error_retries"] = infra_error_retries;
  j["infra_error_backoff_s"] = infra_error_backoff_s;
  j["arch"] = arch;
  if (!name.empty()) j["name"] = name;
  if (repair_notes.enabled())
    j["repair_notes"] = {{"mode", to_string(repair_notes.mode)}, {"store", repair_notes.store}, {"k", repair_notes.k}};
  if (repair_from) j["repair_from"] = {{"file", repair_from->file}, {"sha256", repair_from->sha256}};
  return j;
}

RunConfig run_config_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.require_object(j, "");
  check.only_fields(j, "", {"policy", "model", "replay", "definitions", "problem_set", "workload", "workloads", "prompt_tags", "language",
                            "trajectories_per_tag", "num_turns", "target_speedup", "concurrency", "model_concurrency", "context", "service",
                            "service_token_file", "eval_options", "eval_timeout_s", "infra_error_retries",
                            "infra_error_backoff_s", "arch", "name", "repair_notes", "repair_from"});
  RunConfig c;
  c.policy = check.optional_string(j, "", "policy", "model");
  if (c.policy != "model" && c.policy != "expert" && c.policy != "replay")
    check.fail("policy", "expected model, expert or replay, got '" + c.policy + "'");
  if (c.policy == "model") {
    if (!j.contains("model")) check.fail("model", "required for policy model (provider, base_url, model, ...)");
    c.model = model_config_from_json(j["model"], document + ": model");
  } else if (j.contains("model")) {
    check.fail("model", "only for policy model");
  }
  if (c.policy == "replay") {
    if (!j.contains("replay")) check.fail("replay", "required for policy replay: {\"store\": FILE, \"run\": RUN}");
    const auto& r = j["replay"];
    check.require_object(r, "replay");
    check.only_fields(r, "replay", {"store", "run"});
    c.replay_store = check.string_field(r, "replay", "store");
    c.replay_run = check.string_field(r, "replay", "run");
  }
  c.definitions = check.string_list(j, "", "definitions");
  c.problem_set = check.optional_string(j, "", "problem_set", "");
  if (j.contains("problem_set") && !j.contains("definitions")) {
    auto set = find_problem_set(data_root(), c.problem_set);
    if (!set)
      check.fail("problem_set", "no set '" + c.problem_set + "' in " +
                                    (data_root() / "definitions" / Catalog::kProblemSetsFile).string());
    c.definitions = *set;
  }
  if (j.contains("repair_from")) {
    // A repair run: one trajectory per seed and tag, over the seeds' definitions.
    c.repair_from = repair_from_from_json(check, j["repair_from"]);
    if (j.contains("trajectories_per_tag"))
      check.fail("trajectories_per_tag", "not with repair_from: a repair run has one trajectory per seed and prompt tag");
    std::vector<std::string> seeded;
    for (std::size_t i = 0; i < c.repair_from->seeds.size(); ++i) {
      const std::string& d = c.repair_from->seeds[i].definition;
      if (!c.definitions.empty() && std::find(c.definitions.begin(), c.definitions.end(), d) == c.definitions.end())
        check.fail("repair_from", "seed " + std::to_string(i) + " is for definition " + d + ", which definitions does not list");
      if (std::find(seeded.begin(), seeded.end(), d) == seeded.end()) seeded.push_back(d);
    }
    for (const auto& d : c.definitions)
      if (std::find(seeded.begin(), seeded.end(), d) == seeded.end())
        check.fail("definitions", d + " has no seed in " + c.repair_from->file + " (a repair run runs only its seeds)");
    if (c.definitions.empty()) c.definitions = seeded;
  }
  if (c.definitions.empty()) check.fail("definitions", "name at least one definition");
  c.workload = check.optional_string(j, "", "workload", "");
  if (j.contains("workloads")) {
    if (j.contains("workload")) check.fail("workloads", "give workload (one) or workloads (a sweep), not both");
    c.workloads = workload_selection_from_json(j["workloads"], document + ": workloads");
  }
  c.prompt_tags = check.string_list(j, "", "prompt_tags");
  for (const auto& t : c.prompt_tags)
    if (base_prompt_tag(t) != t)
      check.fail("prompt_tags", "'" + t + "' ends with " + std::string(kRepairTagSuffix) + ", which marks repair trajectories");
  c.language = language_from_json(check, j, c.prompt_tags);
  c.trajectories_per_tag = positive_int(check, j, "trajectories_per_tag", c.trajectories_per_tag, 1000);
  c.num_turns = positive_int(check, j, "num_turns", c.num_turns, 100);
  c.concurrency = positive_int(check, j, "concurrency", c.concurrency, 1024);
  c.model_concurrency = positive_int(check, j, "model_concurrency", c.model_concurrency, 1024);
  if (j.contains("target_speedup")) c.target_speedup = check.number_in(j, "", "target_speedup", 0, kInf, true);
  if (j.contains("context")) c.context = check.enum_field(j, "", "context", parse_context_policy);
  c.service = check.optional_string(j, "", "service", "local");
  if (c.service != "local" && c.service.rfind("http://", 0) != 0 && c.service.rfind("https://", 0) != 0)
    check.fail("service", "expected \"local\" or an http(s) URL, got '" + c.service + "'");
  c.service_token_file = check.optional_string(j, "", "service_token_file", "");
  if (j.contains("service_token_file") && c.service_token_file.empty())
    check.fail("service_token_file", "expected the path of a file holding the token");
  if (j.contains("eval_options")) {
    if (!j["eval_options"].is_object()) check.fail("eval_options", "expected an object (seed, trials, sanitize, profile, time)");
    c.eval_options = j["eval_options"];
  }
  if (j.contains("eval_timeout_s")) c.eval_timeout_s = check.number_in(j, "", "eval_timeout_s", 0, kInf, true);
  if (j.contains("infra_error_retries"))
    c.infra_error_retries = static_cast<int>(check.int_in(j, "", "infra_error_retries", 0, 100));
  if (j.contains("infra_error_backoff_s"))
    c.infra_error_backoff_s = check.number_in(j, "", "infra_error_backoff_s", 0, 3600, false);
  c.arch = check.optional_string(j, "", "arch", c.arch);
  c.name = check.optional_string(j, "", "name", "");
  if (j.contains("repair_notes")) c.repair_notes = repair_notes_from_json(check, j["repair_notes"]);
  return c;
}

}  // namespace ptxbench

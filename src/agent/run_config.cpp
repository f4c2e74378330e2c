#include "agent/run_config.h"

#include "common/error.h"

namespace ptxbench {
namespace {

int positive_int(const JsonChecker& check, const ordered_json& j, const char* key, int fallback, int max) {
  if (!j.contains(key)) return fallback;
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max)
    check.fail(key, "expected an integer from 1 to " + std::to_string(max));
  return v.get<int>();
}

std::vector<std::string> string_list(const JsonChecker& check, const ordered_json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) check.fail(key, "expected a list of strings");
  for (std::size_t i = 0; i < j[key].size(); ++i) {
    if (!j[key][i].is_string() || j[key][i].get<std::string>().empty())
      check.fail(std::string(key) + "[" + std::to_string(i) + "]", "expected a non-empty string");
    out.push_back(j[key][i].get<std::string>());
  }
  return out;
}

}  // namespace

std::string to_string(ContextPolicy c) { return c == ContextPolicy::full ? "full" : "latest"; }

ordered_json RunConfig::to_json() const {
  ordered_json j = {{"policy", policy}};
  if (model) j["model"] = model->to_json();
  if (policy == "replay") j["replay"] = {{"store", replay_store}, {"run", replay_run}};
  j["definitions"] = definitions;
  if (!workload.empty()) j["workload"] = workload;
  j["prompt_tags"] = prompt_tags;
  j["trajectories_per_tag"] = trajectories_per_tag;
  j["num_turns"] = num_turns;
  j["target_speedup"] = target_speedup;
  j["concurrency"] = concurrency;
  j["model_concurrency"] = model_concurrency;
  j["context"] = to_string(context);
  j["service"] = service;
  j["eval_options"] = eval_options;
  j["eval_timeout_s"] = eval_timeout_s;
  j["arch"] = arch;
  if (!name.empty()) j["name"] = name;
  return j;
}

RunConfig run_config_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.require_object(j, "");
  check.only_fields(j, "", {"policy", "model", "replay", "definitions", "workload", "prompt_tags", "trajectories_per_tag",
                            "num_turns", "target_speedup", "concurrency", "model_concurrency", "context", "service",
                            "eval_options", "eval_timeout_s", "arch", "name"});
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
  c.definitions = string_list(check, j, "definitions");
  if (c.definitions.empty()) check.fail("definitions", "name at least one definition");
  c.workload = check.optional_string(j, "", "workload", "");
  c.prompt_tags = string_list(check, j, "prompt_tags");
  c.trajectories_per_tag = positive_int(check, j, "trajectories_per_tag", c.trajectories_per_tag, 1000);
  c.num_turns = positive_int(check, j, "num_turns", c.num_turns, 100);
  c.concurrency = positive_int(check, j, "concurrency", c.concurrency, 1024);
  c.model_concurrency = positive_int(check, j, "model_concurrency", c.model_concurrency, 1024);
  if (j.contains("target_speedup")) {
    if (!j["target_speedup"].is_number() || j["target_speedup"].get<double>() <= 0)
      check.fail("target_speedup", "expected a positive number");
    c.target_speedup = j["target_speedup"].get<double>();
  }
  std::string context = check.optional_string(j, "", "context", "full");
  if (context != "full" && context != "latest") check.fail("context", "expected full or latest, got '" + context + "'");
  c.context = context == "full" ? ContextPolicy::full : ContextPolicy::latest;
  c.service = check.optional_string(j, "", "service", "local");
  if (c.service != "local" && c.service.rfind("http://", 0) != 0 && c.service.rfind("https://", 0) != 0)
    check.fail("service", "expected \"local\" or an http(s) URL, got '" + c.service + "'");
  if (j.contains("eval_options")) {
    if (!j["eval_options"].is_object()) check.fail("eval_options", "expected an object (seed, trials, sanitize, profile, time)");
    c.eval_options = j["eval_options"];
  }
  if (j.contains("eval_timeout_s")) {
    if (!j["eval_timeout_s"].is_number() || j["eval_timeout_s"].get<double>() <= 0)
      check.fail("eval_timeout_s", "expected a positive number of seconds");
    c.eval_timeout_s = j["eval_timeout_s"].get<double>();
  }
  c.arch = check.optional_string(j, "", "arch", c.arch);
  c.name = check.optional_string(j, "", "name", "");
  return c;
}

}  // namespace ptxbench

#include "agent/run_config.h"

#include <limits>

#include "common/enum_names.h"
#include "common/error.h"

namespace ptxbench {
namespace {

int positive_int(const JsonChecker& check, const ordered_json& j, const char* key, int fallback, int max) {
  return j.contains(key) ? static_cast<int>(check.int_in(j, "", key, 1, max)) : fallback;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr EnumName<ContextPolicy> kContexts[] = {{ContextPolicy::full, "full"}, {ContextPolicy::latest, "latest"}};

}  // namespace

std::string to_string(ContextPolicy c) { return enum_name(kContexts, c); }
ContextPolicy parse_context_policy(std::string_view text) { return parse_enum(kContexts, text, "context policy"); }

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
  if (!service_token_file.empty()) j["service_token_file"] = service_token_file;
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
                            "service_token_file", "eval_options", "eval_timeout_s", "arch", "name"});
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
  if (c.definitions.empty()) check.fail("definitions", "name at least one definition");
  c.workload = check.optional_string(j, "", "workload", "");
  c.prompt_tags = check.string_list(j, "", "prompt_tags");
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
  c.arch = check.optional_string(j, "", "arch", c.arch);
  c.name = check.optional_string(j, "", "name", "");
  return c;
}

}  // namespace ptxbench

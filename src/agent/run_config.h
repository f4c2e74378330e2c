// The configuration of an agent run (`ptxbench run --config FILE`, docs/agent.md): who answers
// (a model or a built-in policy), over which definitions and prompt tags, how many trajectories and
// turns, the stop rule, the concurrency, and where evaluations and records go.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/model_client.h"
#include "common/json_check.h"

namespace ptxbench {

enum class ContextPolicy { full, latest };  ///< full history (default), or task + latest pair

struct RunConfig {
  std::string policy = "model";               ///< model | expert | replay
  std::optional<ModelConfig> model;           ///< policy model
  std::string replay_store, replay_run;       ///< policy replay: where the answers come from
  std::vector<std::string> definitions;
  std::string workload;                       ///< empty: each definition's default workload
  std::vector<std::string> prompt_tags;       ///< empty: the prompt builder's default tags
  int trajectories_per_tag = 4;
  int num_turns = 8;
  double target_speedup = 1.2;                ///< stop early at PASSED with speedup >= this
  int concurrency = 8;                        ///< trajectories in flight
  int model_concurrency = 8;                  ///< model calls in flight (per-provider limit)
  ContextPolicy context = ContextPolicy::full;
  std::string service = "local";              ///< URL of `ptxbench serve`, or "local": start one
  /// File (mode 600) with the service's access token; empty: $PTXBENCH_TOKEN when set. The path
  /// is stored with the run, never the token.
  std::string service_token_file;
  ordered_json eval_options = ordered_json::object();  ///< request options (seed, trials, ...)
  double eval_timeout_s = 3600;
  std::string arch = "sm_90a";
  std::string name;                           ///< free text stored with the run

  [[nodiscard]] ordered_json to_json() const;
};

/// Strict: unknown fields, wrong types, bad values are InputError naming `document` and the field.
RunConfig run_config_from_json(const ordered_json& j, const std::string& document = "run config");
std::string to_string(ContextPolicy c);
/// "full" or "latest"; InputError naming both otherwise.
ContextPolicy parse_context_policy(std::string_view text);

}  // namespace ptxbench

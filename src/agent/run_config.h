// The configuration of an agent run (`ptxbench run --config FILE`, docs/agent.md): who answers
// (a model or a built-in policy), over which definitions and prompt tags, how many trajectories and
// turns, the stop rule, the concurrency, where evaluations and records go, and the two repair
// conditions of issue 19: retrieved repair notes in the feedback, and trajectories that start
// from a given wrong kernel (repair trajectories).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "notes/notes_feedback.h"
#include "llm/model_client.h"
#include "common/json_check.h"
#include "compile/triton_check.h"
#include "definitions/workload_selection.h"

namespace ptxbench {

enum class ContextPolicy { full, latest };  ///< full history (default), or task + latest pair

inline constexpr int kMaxRepairNotesK = 10;

/// `"repair_notes": {"mode": ..., "store": ..., "k": ...}`: after a failed verdict, the best `k`
/// notes of the notes store for the failing kernel are appended to the feedback (notes/notes_feedback.h).
struct RepairNotesConfig {
  NotesMode mode = NotesMode::off;
  std::string store;       ///< the notes store file; must exist unless mode is off
  int k = kDefaultNotesK;  ///< notes per failed turn, 1..kMaxRepairNotesK

  [[nodiscard]] bool enabled() const { return mode != NotesMode::off; }
};

/// One wrong kernel a repair trajectory starts from: a line of the repair_from JSONL file.
struct RepairSeed {
  std::string definition;
  std::string wrong_source;  ///< the kernel, as the model would have answered it
  std::string feedback;      ///< the feedback text it got (sent as the task's first feedback)
  std::string status;        ///< its verdict status (a Status name); notes are added unless PASSED
  std::optional<ordered_json> verdict;  ///< its verdict document, when the seed file carries it
  /// Where it came from: free, except that `run` (string), `trajectory` and `turn` (integers), when
  /// given, name the source turn (`ptxbench data seeds` writes them) and are stored with the seed.
  ordered_json origin = ordered_json::object();
};

/// `"repair_from": {"file": SEEDS.jsonl, "sha256": HEX}`: every trajectory of the run is a repair
/// trajectory, one per seed and prompt tag. The file is read when the config is; the stored
/// config records its SHA-256, so a resume refuses a file that changed under the run.
struct RepairFromConfig {
  std::string file;
  std::string sha256;              ///< of the file's bytes
  std::vector<RepairSeed> seeds;   ///< in file order; a trajectory's index is its seed's position
};

/// The prompt tag of a repair trajectory's key ("params" -> "params+repair").
inline constexpr std::string_view kRepairTagSuffix = "+repair";
std::string repair_prompt_tag(const std::string& tag);
/// The prompt builder's tag of a trajectory key: the repair suffix removed when present.
std::string base_prompt_tag(const std::string& key_tag);

struct RunConfig {
  std::string policy = "model";               ///< model | expert | replay
  std::optional<ModelConfig> model;           ///< policy model
  std::string replay_store, replay_run;       ///< policy replay: where the answers come from
  std::vector<std::string> definitions;
  /// The problem set the definitions came from (definitions/problem_sets.json, e.g. "heldout-gqa"):
  /// a config may name a set instead of definitions; it is expanded when read, and the stored form
  /// keeps both (a stored config is never re-expanded).
  std::string problem_set;
  std::string workload;                       ///< empty: each definition's default workload
  /// Set ("all", or a list): every turn is evaluated over this sweep of each definition's
  /// workloads (agent/sweep_evaluation.h); excludes `workload`. Empty: one workload, as before.
  WorkloadSelection workloads;
  std::vector<std::string> prompt_tags;       ///< empty: the prompt builder's default tags
  /// What the model writes: the optional `language` field ("cuda" | "triton"), else derived from
  /// the prompt tags (prompt_tag_language: triton-* tags are Triton). A run has ONE language: tags
  /// of both, or a `language` its tags contradict, are refused. Always written to the stored config.
  CandidateLanguage language = CandidateLanguage::cuda;
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
  /// An INFRA_ERROR verdict (our side failed: worker died, GPU sick) that survived the service's
  /// own retries is evaluated again up to this many times, waiting infra_error_backoff_s · 2^(k-1)
  /// before the k-th; it is never shown to the model nor spends a turn. Past that the run fails.
  int infra_error_retries = 3;
  double infra_error_backoff_s = 30;
  std::string arch = "sm_90a";
  std::string name;                           ///< free text stored with the run
  RepairNotesConfig repair_notes;             ///< default: off
  std::optional<RepairFromConfig> repair_from;  ///< set: a repair run (trajectories_per_tag unused)

  /// The stored form: read back by run_config_from_json to the same config (repair_notes only
  /// when on; repair_from as file + sha256, never the seeds themselves).
  [[nodiscard]] ordered_json to_json() const;
};

/// The run's notes text: `name`, then the conditions that set it apart, e.g.
/// "gemm sweep [repair notes: notes+kernel, k 3] [repair from: seeds.jsonl, 12 seeds]".
std::string run_notes(const RunConfig& config);

/// Reads a repair_from JSONL file strictly (one JSON object a line, blank lines skipped; errors
/// name the file and line). InputError for a missing or empty file; when `expected_sha256` is not
/// empty, also when the file's SHA-256 differs from it.
RepairFromConfig load_repair_seeds(const std::string& file, const std::string& expected_sha256 = "");

/// Strict: unknown fields, wrong types, bad values are InputError naming `document` and the field.
RunConfig run_config_from_json(const ordered_json& j, const std::string& document = "run config");
std::string to_string(ContextPolicy c);
/// "full" or "latest"; InputError naming both otherwise.
ContextPolicy parse_context_policy(std::string_view text);

}  // namespace ptxbench

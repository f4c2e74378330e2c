// Builds run stores for the report tests through the RunStore API, turn by turn as the agent does:
// each scripted turn is an extraction error or a verdict document shaped like the evaluator's (or,
// marked fake, like the service's fake backend's).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_store.h"
#include "evaluator/eval_options.h"

namespace ptxbench::test {

struct ScriptedTurn {
  std::string status;                ///< a verdict status, or "EXTRACTION_ERROR"
  std::optional<double> speedup{};   ///< stored for PASSED
  bool target = false;               ///< target_instruction.correct (with runtime mechanisms)
  bool sass_missing = false;         ///< PASSED verdict without a target_instruction section
  bool sanitize_timeout = false;     ///< TIMEOUT raised by the sanitize stage
  std::string gpu = "NVIDIA H200";   ///< environment.gpu.name ("" for none)
  std::string text = "";             ///< goes into the answer, the candidate and the feedback
  int64_t prompt_tokens = 1000, completion_tokens = 200, reasoning_tokens = 50, cached_tokens = 400;
  /// Tensor-core FLOP coverage: when set, the verdict holds the strict rule's verdict
  /// (strict_correct = PASSED and coverage >= kStrictCoverage); unset, it lacks it like the
  /// verdicts stored before the strict rule.
  std::optional<double> coverage{};
  bool fake = false;  ///< marked like the fake backend's verdicts (`fake: true`, no environment)
  /// Changes the evaluation options recorded in environment.options (defaults otherwise).
  std::function<void(EvalOptions&)> options{};
};

inline ordered_json scripted_verdict(const ScriptedTurn& s, const std::string& definition) {
  ordered_json v = {{"schema", "ptxbench.verdict"}, {"schema_version", 1}, {"status", s.status},
                    {"message", "scripted " + s.status + " " + s.text}, {"definition", definition}, {"arch", "sm_90a"}};
  if (!s.sass_missing) {
    ordered_json ti = {{"rule", "PASSED and (C_Gen4 or D_TMA) executed"}, {"correct", s.target}};
    ti["runtime_mechanisms"] = {{"c_gen4", s.target}, {"d_tma", false}, {"c_gen5", false}, {"d_tmem", false}};
    if (s.coverage) {
      ti["strict_rule"] = strict_target_rule();
      ti["strict_correct"] = s.status == "PASSED" && *s.coverage >= kStrictCoverage;
      ti["coverage"] = *s.coverage;
    }
    v["target_instruction"] = ti;
  }
  v["speedup"] = s.speedup ? ordered_json(*s.speedup) : ordered_json(nullptr);
  ordered_json stages = ordered_json::object();
  if (s.sanitize_timeout) stages["sanitize"] = {{"runs", {{{"seed", 1}, {"timed_out", true}}}}, {"passed", false}};
  v["stages"] = stages;
  EvalOptions options;
  if (s.options) s.options(options);
  v["environment"] = s.gpu.empty() ? ordered_json::object()
                                   : ordered_json{{"gpu", {{"name", s.gpu}, {"device", 0}}}, {"options", options.record()}};
  if (s.fake) {
    v["environment"] = ordered_json::object();
    v["fake"] = true;
  }
  return v;
}

/// Adds one trajectory to `run`, its turns in order; the last turn ends it with `end`
/// (nullopt: the trajectory is left running after its last turn).
/// `seed`: a repair trajectory's seed, stored as its turn 0 with the opening messages.
inline int64_t add_trajectory(RunStore& store, const std::string& run, const TrajectoryKey& key, const std::vector<ScriptedTurn>& turns,
                              std::optional<TrajectoryEnd> end, const std::optional<SeedTurn>& seed = std::nullopt) {
  int64_t t = store.ensure_trajectory(run, key);
  store.record_initial_messages(t, {{"system", "rules", 0, 0}, {"user", "task for " + key.definition, 0, 0}}, seed);
  for (std::size_t i = 0; i < turns.size(); ++i) {
    const auto& s = turns[i];
    auto n = static_cast<int64_t>(i + 1);
    store.begin_turn(t, n);
    ModelUsage u;
    u.prompt_tokens = s.prompt_tokens;
    u.completion_tokens = s.completion_tokens;
    u.reasoning_tokens = s.reasoning_tokens;
    u.cached_tokens = s.cached_tokens;
    u.latency_s = 1.5;
    u.provider = "openai";
    u.model = "scripted";
    u.finish_reason = "stop";
    std::string source = "// turn " + std::to_string(n) + " " + s.text + "\nextern \"C\" int ptxb_run() { return 0; }\n";
    store.record_model_answer(t, n, "Answer " + std::to_string(n) + ": " + s.text + "\n```cuda\n" + source + "```\n", u);
    if (s.status == kExtractionErrorStatus) {
      store.record_extraction_error(t, n, "No code block " + s.text);
    } else {
      store.record_candidate(t, n, source);
      std::string task = "task-" + std::to_string(t) + "-" + std::to_string(n);
      store.record_submission(t, n, task);
      store.record_verdict(t, n, task, scripted_verdict(s, key.definition));
    }
    bool last = i + 1 == turns.size();
    if (last && end) {
      store.complete_turn(t, n, end);
    } else {
      store.record_feedback(t, n, "Feedback for turn " + std::to_string(n) + ": " + s.text);
      store.complete_turn(t, n);
    }
  }
  return t;
}

inline TrajectoryEnd stopped_early() { return {TrajectoryStatus::stopped_early, "PASSED with speedup >= target"}; }
inline TrajectoryEnd finished() { return {TrajectoryStatus::finished, "turn budget"}; }

/// Model text that must never become markup: it would retitle the page or mark the body.
inline const std::string kInjection =
    "<script>document.title='PWNED'</script><img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
    "</textarea></pre></code></details>";

struct SampleRuns {
  std::string agent, refinement;
};

/// Two runs, hand-countable (test_report.cpp states the expected numbers):
/// agent (num_turns 4, model-a): gemm #0 X C(1.5,t) stopped early; #1 E N C(0.8, no SASS data) C(1.1,t);
///   #2 INFRA, sanitize TIMEOUT, RUNTIME_ERROR, TIMEOUT; attn #0 C(1.25,t) stopped early.
/// refinement (num_turns 2, a hostile model name): gemm #0 X C(1.3,t) with fewer tokens; #1 E E (no GPU named).
inline SampleRuns build_sample_runs(RunStore& store) {
  SampleRuns r;
  r.agent = store.create_run({{"policy", "model"}, {"num_turns", 4}}, "model-a", "agent run " + kInjection);
  const std::string gemm = "gemm_n7168_k5120", attn = "attn_" + kInjection;
  add_trajectory(store, r.agent, {gemm, "", "params", 0},
                 {{"COMPILE_ERROR"}, {"PASSED", 1.5, true, false, false, "NVIDIA H200", kInjection}}, stopped_early());
  add_trajectory(store, r.agent, {gemm, "", "params", 1},
                 {{"EXTRACTION_ERROR", {}, false, false, false, ""}, {"INCORRECT_NUMERICAL"}, {"PASSED", 0.8, false, true},
                  {"PASSED", 1.1, true}},
                 finished());
  add_trajectory(store, r.agent, {gemm, "", "params", 2},
                 {{"INFRA_ERROR", {}, false, false, false, ""}, {"TIMEOUT", {}, false, false, true}, {"RUNTIME_ERROR"}, {"TIMEOUT"}},
                 finished());
  add_trajectory(store, r.agent, {attn, "", "params", 0}, {{"PASSED", 1.25, true}}, stopped_early());
  r.refinement = store.create_run({{"policy", "model"}, {"num_turns", 2}}, "model-b" + kInjection, "refinement run");
  ScriptedTurn cheap_x{"COMPILE_ERROR"}, cheap_c{"PASSED", 1.3, true};
  cheap_x.prompt_tokens = cheap_c.prompt_tokens = 500;
  cheap_x.completion_tokens = cheap_c.completion_tokens = 100;
  add_trajectory(store, r.refinement, {gemm, "", "params", 0}, {cheap_x, cheap_c}, finished());
  add_trajectory(store, r.refinement, {gemm, "", "params", 1},
                 {{"EXTRACTION_ERROR", {}, false, false, false, ""}, {"EXTRACTION_ERROR", {}, false, false, false, ""}}, finished());
  return r;
}

/// Two models on two definitions, 12 trajectories each (3 prompt tags x 4) of up to 8 turns, with a
/// mix of statuses like a real run's (from a fixed-seed generator; better with more turns) and early
/// stops at 1.2x: a page that looks like a real report, for the screenshot.
inline std::vector<std::string> build_realistic_runs(RunStore& store) {
  std::vector<std::string> ids;
  uint64_t state = 20261129;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / static_cast<double>(1ull << 53);
  };
  const std::pair<const char*, double> models[] = {{"frontier-model", 0.6}, {"open-model", 0.3}};
  const char* tags[] = {"params", "contract", "patterns"};
  for (const auto& [model, skill] : models) {
    std::string run = store.create_run({{"policy", "model"}, {"num_turns", 8}}, model, std::string(model) + ", full context");
    ids.push_back(run);
    for (const char* def : {"gemm_n7168_k5120", "mha_with_lse_d128"}) {
      for (int i = 0; i < 12; ++i) {
        std::vector<ScriptedTurn> turns;
        std::optional<TrajectoryEnd> end = finished();
        double level = 0.3 + 0.5 * next();
        for (int n = 1; n <= 8; ++n) {
          ScriptedTurn t{"PASSED"};
          t.prompt_tokens = 3000 + 1500 * n;
          t.completion_tokens = 800 + static_cast<int64_t>(1500 * next());
          t.reasoning_tokens = t.completion_tokens / 2;
          t.cached_tokens = 2000 * (n - 1);
          if (next() < skill * (0.5 + 0.1 * n)) {
            t.speedup = level + 0.15 * n * next();
            t.target = next() < 0.75;
          } else {
            double u = next();
            t.status = u < 0.35 ? "COMPILE_ERROR" : u < 0.6 ? "INCORRECT_NUMERICAL" : u < 0.75 ? "RUNTIME_ERROR"
                     : u < 0.82 ? "EXTRACTION_ERROR" : u < 0.9 ? "TIMEOUT" : u < 0.94 ? "SANITIZER_ERROR"
                     : u < 0.97 ? "BANNED_API" : "INFRA_ERROR";
            t.sanitize_timeout = t.status == "TIMEOUT" && u > 0.87;
          }
          turns.push_back(t);
          if (t.speedup && *t.speedup >= 1.2) {
            end = stopped_early();
            break;
          }
        }
        add_trajectory(store, run, {def, "", tags[i / 4], i % 4}, turns, end);
      }
    }
  }
  return ids;
}

}  // namespace ptxbench::test

#include "runs/trajectory_export.h"

#include "common/clock.h"

#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "dev"
#endif

namespace ptxbench {
namespace {

ordered_json optional_time(const std::optional<double>& t) { return t ? ordered_json(iso8601_utc(*t)) : ordered_json(nullptr); }

template <class T>
ordered_json optional_value(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

// turn_<n>.cu, or turn_<n>.py for a Triton candidate, so each file opens in its language.
std::string candidate_file(const TurnRecord& t) {
  const bool triton = t.candidate_language == CandidateLanguage::triton;
  return "turn_" + std::to_string(t.turn) + (triton ? ".py" : ".cu");
}

// The kernel to show as the trajectory's submission: the fastest instruction-qualified correct
// candidate, else the fastest correct one, else the last candidate extracted.
const TurnRecord* submission_turn(const std::vector<TurnRecord>& turns) {
  const TurnRecord* best_target = nullptr;
  const TurnRecord* best = nullptr;
  const TurnRecord* last = nullptr;
  for (const auto& t : turns) {
    if (!t.candidate_source) continue;
    last = &t;
    if (!t.correct) continue;
    double s = t.speedup.value_or(0.0);
    if (!best || s > best->speedup.value_or(0.0)) best = &t;
    if (t.target_instruction && (!best_target || s > best_target->speedup.value_or(0.0))) best_target = &t;
  }
  return best_target ? best_target : best ? best : last;
}

ordered_json usage_json(const ModelUsage& u) {
  return {{"prompt_tokens", u.prompt_tokens},       {"completion_tokens", u.completion_tokens},
          {"reasoning_tokens", u.reasoning_tokens}, {"cached_tokens", u.cached_tokens},
          {"latency_s", u.latency_s},               {"attempts", u.attempts},
          {"provider", u.provider},                 {"model", u.model},
          {"finish_reason", u.finish_reason}};
}

}  // namespace

std::string trajectory_dir_name(const TrajectoryInfo& t) {
  std::string name = safe_name(t.key.definition);
  if (!t.key.workload_uuid.empty()) name += "__" + safe_name(t.key.workload_uuid);
  name += "__" + safe_name(t.key.prompt_tag) + "__" + std::to_string(t.key.index);
  return name;
}

ordered_json trajectory_json(const RunStore& store, int64_t trajectory_id) {
  TrajectoryInfo traj = store.trajectory(trajectory_id);
  RunInfo run = store.run(traj.run_id);
  std::vector<StoredMessage> messages = store.messages(trajectory_id);
  std::vector<TurnRecord> turns = store.turns(trajectory_id);

  ModelUsage total;
  total.attempts = 0;
  int64_t api_calls = 0;
  std::string provider;
  ordered_json turn_docs = ordered_json::array();
  for (const auto& t : turns) {
    ordered_json d;
    d["turn"] = t.turn;
    d["step"] = to_string(t.step);
    d["status"] = t.status;
    d["correct"] = t.correct;
    d["target_instruction"] = t.target_instruction;
    d["speedup"] = optional_value(t.speedup);
    d["candidate_file"] = t.candidate_source ? ordered_json(candidate_file(t)) : ordered_json(nullptr);
    d["candidate_language"] = t.candidate_language ? ordered_json(to_string(*t.candidate_language)) : ordered_json(nullptr);
    d["candidate_sha256"] = optional_value(t.candidate_sha256);
    d["extraction_error"] = optional_value(t.extraction_error);
    d["task_id"] = optional_value(t.task_id);
    d["submissions"] = t.submissions;
    d["usage"] = t.usage ? usage_json(*t.usage) : ordered_json(nullptr);
    d["started_at"] = iso8601_utc(t.started_at);
    d["completed_at"] = optional_time(t.completed_at);
    d["verdict"] = t.verdict ? t.verdict->to_json() : ordered_json(nullptr);
    turn_docs.push_back(std::move(d));
    if (t.usage) {
      ++api_calls;
      total.prompt_tokens += t.usage->prompt_tokens;
      total.completion_tokens += t.usage->completion_tokens;
      total.reasoning_tokens += t.usage->reasoning_tokens;
      total.cached_tokens += t.usage->cached_tokens;
      total.latency_s += t.usage->latency_s;
      total.attempts += t.usage->attempts;
      if (provider.empty()) provider = t.usage->provider;
    }
  }
  const TurnRecord* submission = submission_turn(turns);

  ordered_json extra;
  extra["schema"] = kTrajectoryExtraSchema;
  extra["schema_version"] = kTrajectoryExtraSchemaVersion;
  extra["run_id"] = traj.run_id;
  extra["trajectory_id"] = traj.id;
  extra["definition"] = traj.key.definition;
  extra["workload_uuid"] = traj.key.workload_uuid;
  extra["prompt_tag"] = traj.key.prompt_tag;
  extra["index"] = traj.key.index;
  extra["status"] = to_string(traj.status);
  extra["stop_reason"] = traj.stop_reason;
  extra["best_speedup"] = optional_value(traj.best_speedup);
  extra["best_target_speedup"] = optional_value(traj.best_target_speedup);
  extra["turns_completed"] = traj.turns_completed;
  extra["submission_turn"] = submission ? ordered_json(submission->turn) : ordered_json(nullptr);
  extra["started_at"] = iso8601_utc(traj.started_at);
  extra["finished_at"] = optional_time(traj.finished_at);
  extra["tokens"] = {{"prompt", total.prompt_tokens},
                     {"completion", total.completion_tokens},
                     {"reasoning", total.reasoning_tokens},
                     {"cached", total.cached_tokens}};
  extra["model_latency_s"] = total.latency_s;
  extra["http_attempts"] = total.attempts;
  extra["turns"] = std::move(turn_docs);

  ordered_json info;
  info["exit_status"] = to_string(traj.status);
  info["submission"] = submission ? ordered_json(*submission->candidate_source) : ordered_json(nullptr);
  // No price table: cost stays 0 here; tokens are under ptxbench.tokens.
  info["model_stats"] = {{"instance_cost", 0.0}, {"api_calls", api_calls}};
  info["config"] = {{"agent", run.config},
                    {"model", {{"model_name", run.model}, {"provider", provider}}},
                    {"environment",
                     {{"definition", traj.key.definition}, {"workload_uuid", traj.key.workload_uuid},
                      {"prompt_tag", traj.key.prompt_tag}}},
                    {"agent_type", "ptxbench.agent"},
                    {"model_type", provider.empty() ? std::string("unknown") : provider},
                    {"environment_type", "ptxbench.service"}};
  info["ptxbench_version"] = PTXBENCH_VERSION;
  info["ptxbench"] = std::move(extra);

  ordered_json msgs = ordered_json::array();
  for (const auto& m : messages) {
    ordered_json j = {{"role", m.role}, {"content", m.content}};
    if (!m.reasoning.empty()) j["reasoning_content"] = m.reasoning;  // the field name vLLM/SGLang use
    j["extra"] = {{"ptxbench_turn", m.turn}};
    msgs.push_back(std::move(j));
  }

  ordered_json doc;
  doc["info"] = std::move(info);
  doc["messages"] = std::move(msgs);
  doc["trajectory_format"] = kTrajectoryFormat;
  return doc;
}

fs::path export_trajectory(const RunStore& store, int64_t trajectory_id, const fs::path& runs_root) {
  TrajectoryInfo traj = store.trajectory(trajectory_id);
  fs::path dir = runs_root / safe_name(traj.run_id) / trajectory_dir_name(traj);
  fs::create_directories(dir);
  // Candidate files first: trajectory.json names only files that exist.
  for (const auto& t : store.turns(trajectory_id))
    if (t.candidate_source) write_file_atomic(dir / candidate_file(t), *t.candidate_source);
  write_file_atomic(dir / "trajectory.json", trajectory_json(store, trajectory_id).dump(2) + "\n");
  return dir;
}

fs::path export_run(const RunStore& store, const std::string& run_id, const fs::path& runs_root) {
  RunInfo run = store.run(run_id);
  fs::path dir = runs_root / safe_name(run.id);
  ordered_json list = ordered_json::array();
  for (const auto& t : store.list_trajectories(run_id)) {
    export_trajectory(store, t.id, runs_root);
    list.push_back({{"trajectory_id", t.id},
                    {"dir", trajectory_dir_name(t)},
                    {"definition", t.key.definition},
                    {"workload_uuid", t.key.workload_uuid},
                    {"prompt_tag", t.key.prompt_tag},
                    {"index", t.key.index},
                    {"status", to_string(t.status)},
                    {"turns_completed", t.turns_completed},
                    {"best_speedup", optional_value(t.best_speedup)},
                    {"best_target_speedup", optional_value(t.best_target_speedup)}});
  }
  ordered_json doc = {{"run_id", run.id},
                      {"status", to_string(run.status)},
                      {"model", run.model},
                      {"notes", run.notes},
                      {"created_at", iso8601_utc(run.created_at)},
                      {"config", run.config},
                      {"trajectories", std::move(list)}};
  write_file_atomic(dir / "run.json", doc.dump(2) + "\n");
  return dir;
}

}  // namespace ptxbench

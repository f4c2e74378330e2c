#include "verdict/verdict.h"

#include <utility>

#include "common/error.h"
#include "common/json_fields.h"

namespace ptxbench {
namespace {

// The document's keys that the Verdict itself holds; any other top-level key goes to `extra`.
constexpr const char* kOwnKeys[] = {"schema", "schema_version", "status", "message", "definition", "workload", "arch",
                                    "target_instruction", "speedup", "candidate_us", "baseline_us", "baseline", "seed",
                                    "started_at", "wall_seconds", "stages", "environment", "fake"};

template <class Section>
void add_timing(std::vector<StageTiming>& out, const char* name, const std::optional<Section>& s) {
  if (s) out.push_back({name, s->wall_s, s->gpu_lock_wait_s, s->gpu_alone_after_shared_timeout.has_value()});
}

void read_verdict(const ordered_json& j, Verdict& v) {
  require_json_object(j);
  check_schema(j, kVerdictSchema, kVerdictSchemaVersion, "a verdict");
  if (!j.contains("status") || j["status"].is_null()) throw JsonFieldError("status", "missing");
  read_enum(j, "status", v.status, status_from_name);
  read_field(j, "message", v.message);
  read_field(j, "definition", v.definition);
  read_object(j, "workload", [&](const ordered_json& w) {
    read_field(w, "uuid", v.workload_uuid);
    read_field(w, "label", v.workload_label);
  });
  read_field(j, "arch", v.arch);
  read_object(j, "target_instruction", [&](const ordered_json& ti) {
    read_field(ti, "rule", v.target_rule);
    read_field(ti, "correct", v.target_instruction_correct);
    read_field(ti, "strict_correct", v.target_instruction_strict);
    read_field(ti, "coverage", v.tensor_core_coverage);
    read_with(ti, "runtime_mechanisms", v.runtime_mechanisms, mechanisms_from_json);
  });
  read_field(j, "speedup", v.speedup);
  read_field(j, "candidate_us", v.candidate_us);
  read_field(j, "baseline_us", v.baseline_us);
  read_field(j, "baseline", v.baseline_name);
  read_field(j, "seed", v.seed);
  read_field(j, "started_at", v.started_at);
  read_field(j, "wall_seconds", v.wall_seconds);
  read_field(j, "stages", v.stages);
  read_field(j, "fake", v.fake_backend);
  if (j.contains("environment") && !j["environment"].is_null() && !j["environment"].empty())
    read_field(j, "environment", v.environment);
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool own = false;
    for (const char* k : kOwnKeys) own = own || it.key() == k;
    if (!own) v.extra[it.key()] = it.value();
  }
}

}  // namespace

std::string target_instruction_rule(const std::string& arch) {
  if (arch.rfind("sm_100", 0) == 0) return "PASSED and C_Gen5 executed (tcgen05.mma + tcgen05.ld)";
  return "PASSED and (C_Gen4 or D_TMA) executed (wgmma.mma_async, or cp.async.bulk.tensor)";
}

bool target_instruction_met(const std::string& arch, const Mechanisms& m) {
  if (arch.rfind("sm_100", 0) == 0) return m.c_gen5;
  return m.c_gen4 || m.d_tma;
}

void json_fields(JsonIo& io, StageSections& s) {
  io("compile", s.compile);
  io("static_sass", s.static_sass);
  io("sanitize", s.sanitize);
  io("correctness", s.correctness);
  io("runtime_sass", s.runtime_sass);
  io("timing", s.timing);
  io("runner_output", s.runner_output);
}

std::vector<StageTiming> stage_timings(const StageSections& s) {
  std::vector<StageTiming> out;
  add_timing(out, "compile", s.compile);
  add_timing(out, "static_sass", s.static_sass);
  add_timing(out, "sanitize", s.sanitize);
  add_timing(out, "correctness", s.correctness);
  add_timing(out, "runtime_sass", s.runtime_sass);
  add_timing(out, "timing", s.timing);
  return out;
}

Verdict infra_verdict(std::string message, bool fake_backend) {
  Verdict v;
  v.status = Status::INFRA_ERROR;
  v.message = std::move(message);
  v.fake_backend = fake_backend;
  return v;
}

std::string strict_target_rule() {
  return "PASSED and at least " + std::to_string(static_cast<int>(kStrictCoverage * 100)) +
         "% of the workload's FLOPs executed on tensor-core MMA instructions (executed per-instruction counts × shapes)";
}

std::string Verdict::rule() const { return target_rule.empty() ? target_instruction_rule(arch) : target_rule; }

ordered_json Verdict::to_json() const {
  ordered_json j;
  j["schema"] = kVerdictSchema;
  j["schema_version"] = kVerdictSchemaVersion;
  j["status"] = to_string(status);
  j["message"] = message;
  j["definition"] = definition;
  j["workload"] = {{"uuid", workload_uuid}, {"label", workload_label}};
  j["arch"] = arch;
  ordered_json ti = {{"rule", rule()}, {"correct", target_instruction_correct}};
  if (runtime_mechanisms) ti["runtime_mechanisms"] = ptxbench::to_json(*runtime_mechanisms);
  if (tensor_core_coverage) {
    ti["strict_rule"] = strict_target_rule();
    ti["strict_correct"] = target_instruction_strict;
    ti["coverage"] = *tensor_core_coverage;
  }
  j["target_instruction"] = ti;
  j["speedup"] = value_or_null(speedup);
  j["candidate_us"] = value_or_null(candidate_us);
  j["baseline_us"] = value_or_null(baseline_us);
  j["baseline"] = baseline_name;
  j["seed"] = seed;
  j["started_at"] = started_at;
  j["wall_seconds"] = wall_seconds;
  j["stages"] = stages;
  j["environment"] = environment ? ordered_json(*environment) : ordered_json::object();
  if (fake_backend) j["fake"] = true;
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

Verdict Verdict::from_json(const ordered_json& j) {
  Verdict v;
  try {
    read_verdict(j, v);
  } catch (const JsonFieldError& e) {
    throw InputError("verdict", (e.path().empty() ? "(top level)" : e.path()) + ": " + e.reason());
  }
  return v;
}

}  // namespace ptxbench

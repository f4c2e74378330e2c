#include "verdict/verdict.h"

#include <ctime>

namespace ptxbench {

std::string target_instruction_rule(const std::string& arch) {
  if (arch.rfind("sm_100", 0) == 0) return "PASSED and C_Gen5 executed (tcgen05.mma + tcgen05.ld)";
  return "PASSED and (C_Gen4 or D_TMA) executed (wgmma.mma_async, or cp.async.bulk.tensor)";
}

bool target_instruction_met(const std::string& arch, const Mechanisms& m) {
  if (arch.rfind("sm_100", 0) == 0) return m.c_gen5;
  return m.c_gen4 || m.d_tma;
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ordered_json Verdict::to_json() const {
  ordered_json j;
  j["schema"] = kVerdictSchema;
  j["schema_version"] = kVerdictSchemaVersion;
  j["status"] = to_string(status);
  j["message"] = message;
  j["definition"] = definition;
  j["workload"] = {{"uuid", workload_uuid}, {"label", workload_label}};
  j["arch"] = arch;
  ordered_json ti = {{"rule", target_instruction_rule(arch)}, {"correct", target_instruction_correct}};
  if (runtime_mechanisms) ti["runtime_mechanisms"] = ptxbench::to_json(*runtime_mechanisms);
  j["target_instruction"] = ti;
  j["speedup"] = speedup ? ordered_json(*speedup) : ordered_json(nullptr);
  j["candidate_us"] = candidate_us ? ordered_json(*candidate_us) : ordered_json(nullptr);
  j["baseline_us"] = baseline_us ? ordered_json(*baseline_us) : ordered_json(nullptr);
  j["baseline"] = baseline_name;
  j["seed"] = seed;
  j["started_at"] = started_at;
  j["wall_seconds"] = wall_seconds;
  j["stages"] = stages;
  j["environment"] = environment;
  return j;
}

}  // namespace ptxbench

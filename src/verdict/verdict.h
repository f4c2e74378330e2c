// The verdict: one versioned JSON document per evaluation. Stages fill their sections as they
// run; a stage that was not reached leaves its section absent. Feedback text is rendered from
// the JSON alone (feedback.h), so stored verdicts can be re-rendered.
#pragma once

#include <optional>
#include <string>

#include "common/json_check.h"
#include "sass/opcode_counts.h"
#include "verdict/status.h"

namespace ptxbench {

inline constexpr const char* kVerdictSchema = "ptxbench.verdict";
inline constexpr int kVerdictSchemaVersion = 1;

struct Verdict {
  Status status = Status::INFRA_ERROR;
  std::string message;  ///< the reason in one paragraph (what failed, where)
  std::string definition;
  std::string workload_uuid;
  std::string workload_label;
  std::string arch;
  std::optional<Mechanisms> runtime_mechanisms;
  bool target_instruction_correct = false;
  std::optional<double> speedup;
  std::optional<double> candidate_us;
  std::optional<double> baseline_us;
  std::string baseline_name;
  uint64_t seed = 0;
  std::string started_at;  ///< ISO 8601 UTC
  double wall_seconds = 0.0;
  ordered_json stages = ordered_json::object();  ///< compile, static_sass, sanitize, ...
  ordered_json environment = ordered_json::object();

  [[nodiscard]] ordered_json to_json() const;
};

/// The rule that makes a PASSED verdict target-instruction correct on an architecture.
std::string target_instruction_rule(const std::string& arch);
bool target_instruction_met(const std::string& arch, const Mechanisms& runtime);

/// Current UTC time as "2026-11-29T12:00:00Z".
std::string utc_now_iso8601();

}  // namespace ptxbench

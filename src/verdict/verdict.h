// The verdict: one versioned JSON document per evaluation, typed. Stages fill their sections as
// they run; a stage that was not reached leaves its section unset. Feedback text is rendered from
// the verdict alone (feedback.h), so stored verdicts can be re-rendered: Verdict::from_json reads
// every schema version this one can (docs/verdict.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/json_check.h"
#include "sass/opcode_counts.h"
#include "verdict/compile_section.h"
#include "verdict/correctness_section.h"
#include "verdict/environment.h"
#include "verdict/sanitize_section.h"
#include "verdict/sass_sections.h"
#include "verdict/status.h"
#include "verdict/timing_section.h"

namespace ptxbench {

inline constexpr const char* kVerdictSchema = "ptxbench.verdict";
inline constexpr int kVerdictSchemaVersion = 1;

/// The document's "stages", in the order they run.
struct StageSections {
  std::optional<CompileSection> compile;
  std::optional<StaticSassSection> static_sass;
  std::optional<SanitizeSection> sanitize;
  std::optional<CorrectnessSection> correctness;
  std::optional<RuntimeSassSection> runtime_sass;
  std::optional<TimingSection> timing;
  std::optional<std::string> runner_output;  ///< the runner's own output (cut), when one ran
};

void json_fields(JsonIo& io, StageSections& s);

/// Where a stage's time went (service load reports).
struct StageTiming {
  std::string stage;  ///< "sanitize", ...
  std::optional<double> wall_s;
  std::optional<double> gpu_lock_wait_s;
  bool retried_alone = false;  ///< timed out on a shared GPU and ran again alone
};

/// The stages present, in order.
std::vector<StageTiming> stage_timings(const StageSections& s);

struct Verdict {
  Status status = Status::INFRA_ERROR;
  std::string message;  ///< the reason in one paragraph (what failed, where)
  std::string definition;
  std::string workload_uuid;
  std::string workload_label;
  std::string arch;
  /// The target-instruction rule as recorded; empty: target_instruction_rule(arch).
  std::string target_rule;
  std::optional<Mechanisms> runtime_mechanisms;
  bool target_instruction_correct = false;
  /// The strict variant (docs/verdict.md): PASSED and tensor-core coverage ≥ kStrictCoverage.
  bool target_instruction_strict = false;
  /// Share of the workload's FLOPs executed on tensor-core MMA instructions (lower end), when measured.
  std::optional<double> tensor_core_coverage;
  std::optional<double> speedup;
  std::optional<double> candidate_us;
  std::optional<double> baseline_us;
  std::string baseline_name;
  uint64_t seed = 0;
  std::string started_at;  ///< ISO 8601 UTC
  double wall_seconds = 0.0;
  StageSections stages;
  std::optional<Environment> environment;  ///< unset: the evaluation ended before it saw a GPU
  /// From the service's fake backend (CPU tests, `serve --fake-gpus`), not a GPU measurement:
  /// `"fake": true` at the top level; reports refuse it unless asked (docs/report.md).
  bool fake_backend = false;
  /// Top-level keys that other layers add to the document (the service's task stamp, the fake
  /// backend's lock intervals), kept as they came so that a document read and written again is the same.
  ordered_json extra = ordered_json::object();

  /// The rule the verdict states: the recorded one, else the arch's.
  [[nodiscard]] std::string rule() const;
  [[nodiscard]] ordered_json to_json() const;
  /// Reads a verdict document of any schema version up to kVerdictSchemaVersion. Absent keys keep
  /// their defaults (a minimal INFRA_ERROR document has only a status and a message); a wrong
  /// type, an unknown status or a newer schema is an InputError naming the field.
  static Verdict from_json(const ordered_json& j);
};

/// A verdict of our own failure, not the candidate's (a worker that failed, a task given up after
/// its attempts): INFRA_ERROR with `message`; `fake_backend` marks one from the fake backend.
Verdict infra_verdict(std::string message, bool fake_backend = false);

/// The strict target-instruction rule's coverage threshold, and its statement.
inline constexpr double kStrictCoverage = 0.9;
std::string strict_target_rule();

/// The rule that makes a PASSED verdict target-instruction correct on an architecture.
std::string target_instruction_rule(const std::string& arch);
bool target_instruction_met(const std::string& arch, const Mechanisms& runtime);

}  // namespace ptxbench

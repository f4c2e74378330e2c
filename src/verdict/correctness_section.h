// The verdict's correctness section: the tolerance, and every trial checked against the reference
// (the correctness trials, then each timing trial's last call) with each output's comparison.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verdict/correctness.h"
#include "verdict/output_check.h"
#include "verdict/stage_record.h"

namespace ptxbench {

/// Which call a trial checked.
enum class TrialPhase {
  correctness,  ///< a correctness call (fresh inputs)
  timing,       ///< the timed call of a timing trial checked in full (chosen at random; schema 1: the last)
  baseline,     ///< the baseline's own output (checked at the first timing trial)
  spot_check,   ///< sampled rows of a timed call (only a failing one is recorded)
};

std::string to_string(TrialPhase p);
/// "correctness", "timing" or "baseline"; InputError naming them otherwise.
TrialPhase parse_trial_phase(std::string_view text);

struct TrialRecord {
  int trial = 0;  ///< 1-based within its phase
  TrialPhase phase = TrialPhase::correctness;
  uint64_t seed = 0;
  bool passed = false;
  std::optional<std::vector<TensorComparison>> tensors;  ///< unset when the call itself failed
  std::optional<std::string> error;  ///< the failed call's error, or the check's problems ("; ")
};
void json_fields(JsonIo& io, TrialRecord& t);

/// A trial whose outputs were checked.
TrialRecord trial_record(int trial, TrialPhase phase, uint64_t seed, const OutputCheck& check);

struct CorrectnessSection : StageRecord<CorrectnessSection> {
  Tolerance tolerance;
  int trials_planned = 0;  ///< correctness trials planned (timing trials are added to `trials`)
  bool passed = false;
  std::vector<TrialRecord> trials;
};
void json_fields(JsonIo& io, CorrectnessSection& s);

}  // namespace ptxbench

#include "verdict/correctness_section.h"

#include "common/enum_names.h"

namespace ptxbench {
namespace {
constexpr EnumName<TrialPhase> kPhases[] = {{TrialPhase::correctness, "correctness"},
                                            {TrialPhase::timing, "timing"},
                                            {TrialPhase::baseline, "baseline"},
                                            {TrialPhase::spot_check, "spot_check"}};
}  // namespace

std::string to_string(TrialPhase p) { return enum_name(kPhases, p); }
TrialPhase parse_trial_phase(std::string_view text) { return parse_enum(kPhases, text, "trial phase"); }

TrialRecord trial_record(int trial, TrialPhase phase, uint64_t seed, const OutputCheck& check) {
  TrialRecord t{trial, phase, seed, check.passed(), check.tensors, std::nullopt};
  if (!check.problems.empty()) {
    std::string all;
    for (const auto& p : check.problems) all += (all.empty() ? "" : "; ") + p.message;
    t.error = all;
  }
  return t;
}

void json_fields(JsonIo& io, TrialRecord& t) {
  io("trial", t.trial);
  io.name("phase", t.phase, parse_trial_phase);
  io("seed", t.seed);
  io("passed", t.passed);
  io("tensors", t.tensors);
  io("error", t.error);
}

void json_fields(JsonIo& io, CorrectnessSection& s) {
  io("tolerance", s.tolerance);
  io("trials_planned", s.trials_planned);
  io("passed", s.passed);
  io("trials", s.trials);
  stage_record_fields(io, s);
}

}  // namespace ptxbench

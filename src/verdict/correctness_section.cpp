#include "verdict/correctness_section.h"

#include "common/enum_names.h"

namespace ptxbench {
namespace {
constexpr EnumName<TrialPhase> kPhases[] = {
    {TrialPhase::correctness, "correctness"},
    {TrialPhase::timing, "timing"},
    {TrialPhase::baseline, "baseline"},
    {TrialPhase::spot_check, "spot_check"},
};
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

void to_json(ordered_json& j, const TrialRecord& t) {
  j = {{"trial", t.trial}, {"phase", to_string(t.phase)}, {"seed", t.seed}, {"passed", t.passed}};
  write_optional(j, "tensors", t.tensors);
  write_optional(j, "error", t.error);
}

void from_json(const ordered_json& j, TrialRecord& t) {
  require_json_object(j);
  read_field(j, "trial", t.trial);
  read_enum(j, "phase", t.phase, parse_trial_phase);
  read_field(j, "seed", t.seed);
  read_field(j, "passed", t.passed);
  read_field(j, "tensors", t.tensors);
  read_field(j, "error", t.error);
}

void to_json(ordered_json& j, const CorrectnessSection& s) {
  j = {{"tolerance", s.tolerance}, {"trials_planned", s.trials_planned}, {"passed", s.passed}, {"trials", s.trials}};
  write_stage_record(j, s);
}

void from_json(const ordered_json& j, CorrectnessSection& s) {
  require_json_object(j);
  read_field(j, "tolerance", s.tolerance);
  read_field(j, "trials_planned", s.trials_planned);
  read_field(j, "passed", s.passed);
  read_field(j, "trials", s.trials);
  read_stage_record(j, s);
}

}  // namespace ptxbench

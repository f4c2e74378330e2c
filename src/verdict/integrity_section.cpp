#include "verdict/integrity_section.h"

#include "common/json_fields.h"

namespace ptxbench {

void to_json(ordered_json& j, const HostBoundRecord& r) {
  j = {{"trial", r.trial}, {"overhead_us", r.overhead_us}, {"excess_us", r.excess_us},
       {"impossible_calls", r.impossible_calls}, {"candidate_gaps_us", r.candidate_gaps_us},
       {"baseline_gaps_us", r.baseline_gaps_us}};
}
void from_json(const ordered_json& j, HostBoundRecord& r) {
  require_json_object(j);
  read_field(j, "trial", r.trial);
  read_field(j, "overhead_us", r.overhead_us);
  read_field(j, "excess_us", r.excess_us);
  read_field(j, "impossible_calls", r.impossible_calls);
  read_field(j, "candidate_gaps_us", r.candidate_gaps_us);
  read_field(j, "baseline_gaps_us", r.baseline_gaps_us);
}

void to_json(ordered_json& j, const HostChargeRecord& r) {
  j = {{"overhead_us", r.overhead_us}, {"excess_us", r.excess_us}, {"allowed_us", r.allowed_us},
       {"charged_us", r.charged_us}};
  write_optional(j, "launch_allowance_us", r.launch_allowance_us);
}
void from_json(const ordered_json& j, HostChargeRecord& r) {
  require_json_object(j);
  read_field(j, "overhead_us", r.overhead_us);
  read_field(j, "excess_us", r.excess_us);
  read_field(j, "allowed_us", r.allowed_us);
  read_field(j, "charged_us", r.charged_us);
  read_field(j, "launch_allowance_us", r.launch_allowance_us);
}

void to_json(ordered_json& j, const LaunchAllowanceRecord& r) {
  j = {{"allowance_us", r.allowance_us}, {"cap_us", r.cap_us}, {"capped", r.capped},
       {"calibrations_us", r.calibrations_us}, {"source", r.source}};
  write_optional(j, "measured_us", r.measured_us);
  if (!r.measured_trials_us.empty()) j["measured_trials_us"] = r.measured_trials_us;
  j["key"] = r.key;
  j["store"] = r.store;
}
void from_json(const ordered_json& j, LaunchAllowanceRecord& r) {
  require_json_object(j);
  read_field(j, "allowance_us", r.allowance_us);
  read_field(j, "cap_us", r.cap_us);
  read_field(j, "capped", r.capped);
  read_field(j, "calibrations_us", r.calibrations_us);
  read_field(j, "source", r.source);
  read_field(j, "measured_us", r.measured_us);
  read_field(j, "measured_trials_us", r.measured_trials_us);
  read_field(j, "key", r.key);
  read_field(j, "store", r.store);
}

void to_json(ordered_json& j, const FullCheckRecord& r) { j = {{"trial", r.trial}, {"call", r.call}, {"passed", r.passed}}; }
void from_json(const ordered_json& j, FullCheckRecord& r) {
  require_json_object(j);
  read_field(j, "trial", r.trial);
  read_field(j, "call", r.call);
  read_field(j, "passed", r.passed);
}

void to_json(ordered_json& j, const CalibrationRecord& r) {
  j = ordered_json::object();
  write_optional(j, "calibrated_us", r.calibrated_us);
  j["measured_us"] = r.measured_us;
  j["margin"] = r.margin;
  j["within"] = r.within;
  j["recorded"] = r.recorded;
}
void from_json(const ordered_json& j, CalibrationRecord& r) {
  require_json_object(j);
  read_field(j, "calibrated_us", r.calibrated_us);
  read_field(j, "measured_us", r.measured_us);
  read_field(j, "margin", r.margin);
  read_field(j, "within", r.within);
  read_field(j, "recorded", r.recorded);
}

void to_json(ordered_json& j, const ProfileCheckRecord& r) {
  j = {{"holds", r.holds}};
  if (!r.reasons.empty()) j["reasons"] = r.reasons;
  if (!r.notes.empty()) j["notes"] = r.notes;
  write_optional(j, "profiled_us", r.profiled_us);
  j["timed_us"] = r.timed_us;
  write_optional(j, "time_ratio", r.time_ratio);
  j["sass_gmma"] = r.sass_gmma;
  write_optional(j, "hw_gmma", r.hw_gmma);
  j["sass_tma"] = r.sass_tma;
  write_optional(j, "hw_tma", r.hw_tma);
}
void from_json(const ordered_json& j, ProfileCheckRecord& r) {
  require_json_object(j);
  read_field(j, "holds", r.holds);
  read_field(j, "reasons", r.reasons);
  read_field(j, "notes", r.notes);
  read_field(j, "profiled_us", r.profiled_us);
  read_field(j, "timed_us", r.timed_us);
  read_field(j, "time_ratio", r.time_ratio);
  read_field(j, "sass_gmma", r.sass_gmma);
  read_field(j, "hw_gmma", r.hw_gmma);
  read_field(j, "sass_tma", r.sass_tma);
  read_field(j, "hw_tma", r.hw_tma);
}

void to_json(ordered_json& j, const IntegrityRecord& r) {
  j = {{"policy", r.policy},
       {"fresh_inputs", r.fresh_inputs},
       {"spot_rows", r.spot_rows},
       {"spot_checked_calls", r.spot_checked_calls},
       {"spot_failed_calls", r.spot_failed_calls},
       {"full_checks", r.full_checks},
       {"host_bound", r.host_bound},
       {"launches", r.launches},
       {"stray", r.stray}};
  write_optional(j, "host_charge", r.host_charge);
  write_optional(j, "baseline_calibration", r.baseline_calibration);
  write_optional(j, "profile_check", r.profile_check);
  write_optional(j, "triton_launch_path", r.triton_launch_path);
}
void from_json(const ordered_json& j, IntegrityRecord& r) {
  require_json_object(j);
  read_field(j, "policy", r.policy);
  read_field(j, "fresh_inputs", r.fresh_inputs);
  read_field(j, "spot_rows", r.spot_rows);
  read_field(j, "spot_checked_calls", r.spot_checked_calls);
  read_field(j, "spot_failed_calls", r.spot_failed_calls);
  read_field(j, "full_checks", r.full_checks);
  read_field(j, "host_bound", r.host_bound);
  read_field(j, "host_charge", r.host_charge);
  read_field(j, "launches", r.launches);
  read_field(j, "stray", r.stray);
  read_field(j, "baseline_calibration", r.baseline_calibration);
  read_field(j, "profile_check", r.profile_check);
  read_field(j, "triton_launch_path", r.triton_launch_path);
}

void to_json(ordered_json& j, const CoverageRecord& r) {
  j = {{"available", r.available}};
  if (r.available) {
    j["workload_flops"] = r.workload_flops;
    j["tensor_core_flops"] = r.tensor_core_flops;
    j["share"] = r.share;
    write_optional(j, "share_max", r.share_max);
  }
  if (!r.note.empty()) j["note"] = r.note;
}
void from_json(const ordered_json& j, CoverageRecord& r) {
  require_json_object(j);
  read_field(j, "available", r.available);
  read_field(j, "workload_flops", r.workload_flops);
  read_field(j, "tensor_core_flops", r.tensor_core_flops);
  read_field(j, "share", r.share);
  read_field(j, "share_max", r.share_max);
  read_field(j, "note", r.note);
}

}  // namespace ptxbench

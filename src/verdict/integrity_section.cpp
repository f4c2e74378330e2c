#include "verdict/integrity_section.h"

#include "common/json_fields.h"

namespace ptxbench {

void json_fields(JsonIo& io, HostBoundRecord& r) {
  io("trial", r.trial);
  io("overhead_us", r.overhead_us);
  io("excess_us", r.excess_us);
  io("impossible_calls", r.impossible_calls);
  io("candidate_gaps_us", r.candidate_gaps_us);
  io("baseline_gaps_us", r.baseline_gaps_us);
}

void json_fields(JsonIo& io, HostChargeRecord& r) {
  io("overhead_us", r.overhead_us);
  io("excess_us", r.excess_us);
  io("allowed_us", r.allowed_us);
  io("charged_us", r.charged_us);
  io("launch_allowance_us", r.launch_allowance_us);
}

void json_fields(JsonIo& io, LaunchAllowanceRecord& r) {
  io("allowance_us", r.allowance_us);
  io("cap_us", r.cap_us);
  io("capped", r.capped);
  io("calibrations_us", r.calibrations_us);
  io("source", r.source);
  io("measured_us", r.measured_us);
  io.when(!r.measured_trials_us.empty(), "measured_trials_us", r.measured_trials_us);
  io("key", r.key);
  io("store", r.store);
}

void json_fields(JsonIo& io, FullCheckRecord& r) {
  io("trial", r.trial);
  io("call", r.call);
  io("passed", r.passed);
}

void json_fields(JsonIo& io, CalibrationRecord& r) {
  io("calibrated_us", r.calibrated_us);
  io("measured_us", r.measured_us);
  io("margin", r.margin);
  io("within", r.within);
  io("recorded", r.recorded);
}

void json_fields(JsonIo& io, ProfileCheckRecord& r) {
  io("holds", r.holds);
  io.when(!r.reasons.empty(), "reasons", r.reasons);
  io.when(!r.notes.empty(), "notes", r.notes);
  io("profiled_us", r.profiled_us);
  io("timed_us", r.timed_us);
  io("time_ratio", r.time_ratio);
  io("sass_gmma", r.sass_gmma);
  io("hw_gmma", r.hw_gmma);
  io("sass_tma", r.sass_tma);
  io("hw_tma", r.hw_tma);
}

void json_fields(JsonIo& io, IntegrityRecord& r) {
  io("policy", r.policy);
  io("fresh_inputs", r.fresh_inputs);
  io("spot_rows", r.spot_rows);
  io("spot_checked_calls", r.spot_checked_calls);
  io("spot_failed_calls", r.spot_failed_calls);
  io("full_checks", r.full_checks);
  io("host_bound", r.host_bound);
  io("launches", r.launches);
  io("stray", r.stray);
  io("host_charge", r.host_charge);
  io("baseline_calibration", r.baseline_calibration);
  io("profile_check", r.profile_check);
  io("triton_launch_path", r.triton_launch_path);
}

void json_fields(JsonIo& io, CoverageRecord& r) {
  io("available", r.available);
  if (io.reading() || r.available) {
    io("workload_flops", r.workload_flops);
    io("tensor_core_flops", r.tensor_core_flops);
    io("share", r.share);
    io("share_max", r.share_max);
  }
  io.when(!r.note.empty(), "note", r.note);
}

}  // namespace ptxbench

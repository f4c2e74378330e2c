// What every stage section records besides its own results: its wall time, its wait for the GPU
// locks, and, when it timed out while other workers shared the GPU, that first attempt (the stage
// then ran again with the GPU alone, and its section is the second attempt's).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/json_fields.h"

namespace ptxbench {

template <class Section>
struct SharedTimeoutAttempt {
  std::string message;                       ///< the verdict message the attempt ended with
  std::shared_ptr<const Section> stage;      ///< its section, when it recorded one
  std::optional<std::string> runner_output;  ///< the killed runner's output (cut)
};

/// The base of every stage section (`Section` is the section itself).
template <class Section>
struct StageRecord {
  std::optional<double> wall_s;           ///< the stage's wall time
  std::optional<double> gpu_lock_wait_s;  ///< its wait for the GPU locks (workers sharing a GPU)
  std::optional<SharedTimeoutAttempt<Section>> gpu_alone_after_shared_timeout;
};

/// Appends the record's keys to a section's own, where the evaluator adds them.
template <class Section>
void write_stage_record(ordered_json& j, const StageRecord<Section>& r) {
  write_optional(j, "wall_s", r.wall_s);
  write_optional(j, "gpu_lock_wait_s", r.gpu_lock_wait_s);
  if (const auto& a = r.gpu_alone_after_shared_timeout) {
    ordered_json attempt = {{"message", a->message}};
    if (a->stage) attempt["stage"] = *a->stage;
    write_optional(attempt, "runner_output", a->runner_output);
    j["gpu_alone_after_shared_timeout"] = attempt;
  }
}

template <class Section>
void read_stage_record(const ordered_json& j, StageRecord<Section>& r) {
  read_field(j, "wall_s", r.wall_s);
  read_field(j, "gpu_lock_wait_s", r.gpu_lock_wait_s);
  r.gpu_alone_after_shared_timeout.reset();
  auto it = j.find("gpu_alone_after_shared_timeout");
  if (it == j.end() || it->is_null()) return;
  try {
    require_json_object(*it);
    SharedTimeoutAttempt<Section> a;
    read_field(*it, "message", a.message);
    std::optional<Section> stage;
    read_field(*it, "stage", stage);
    if (stage) a.stage = std::make_shared<const Section>(std::move(*stage));
    read_field(*it, "runner_output", a.runner_output);
    r.gpu_alone_after_shared_timeout = std::move(a);
  } catch (...) {
    detail::rethrow_in_field("gpu_alone_after_shared_timeout");
  }
}

}  // namespace ptxbench

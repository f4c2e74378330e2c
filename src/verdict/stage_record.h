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

template <class Section>
void json_fields(JsonIo& io, SharedTimeoutAttempt<Section>& a) {
  io("message", a.message);
  io("stage", a.stage);
  io("runner_output", a.runner_output);
}

/// The base of every stage section (`Section` is the section itself).
template <class Section>
struct StageRecord {
  std::optional<double> wall_s;           ///< the stage's wall time
  std::optional<double> gpu_lock_wait_s;  ///< its wait for the GPU locks (workers sharing a GPU)
  std::optional<SharedTimeoutAttempt<Section>> gpu_alone_after_shared_timeout;
};

/// The record's keys, after a section's own (where the evaluator adds them).
template <class Section>
void stage_record_fields(JsonIo& io, StageRecord<Section>& r) {
  io("wall_s", r.wall_s);
  io("gpu_lock_wait_s", r.gpu_lock_wait_s);
  io("gpu_alone_after_shared_timeout", r.gpu_alone_after_shared_timeout);
}

}  // namespace ptxbench

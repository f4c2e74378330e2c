// What cuDNN says about one engine config of a heuristic's answer: its engine, knobs and notes,
// for the plan a baseline chose (PlanChoice::describe, PTXBENCH_CUDNN_DEBUG).
#pragma once

#include "baseline/cudnn_graph.h"

namespace ptxbench::cudnn {

/// Best effort: a field cuDNN refuses stays empty.
PlanChoice inspect_engine_config(cudnnBackendDescriptor_t config);

}  // namespace ptxbench::cudnn

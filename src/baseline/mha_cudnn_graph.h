// The SDPA operation graphs behind MhaFwdCudnn / MhaBwdCudnn, for tests and tools that plan them
// without running them (e.g. for an H200 described by its properties, on a machine without one).
#pragma once

#include <string>

#include "baseline/cudnn_graph.h"
#include "baseline/mha_cudnn.h"

namespace ptxbench {

/// The forward (Q, K, V → O, Stats) or backward graph for `shape`, scale 1/√D, in lowering
/// `style` ("fe113": cudnn-frontend ≥ 1.13; "fe18": cudnn-frontend 1.8), finalized on `handle`,
/// or for the device properties later given to the heuristics when `handle` is null.
cudnn::GraphBuilder build_sdpa_graph(bool backward, const MhaShape& shape, const std::string& style,
                                     cudnnHandle_t handle);

}  // namespace ptxbench

// The real evaluation backend of a service worker (GPU library): one Evaluator per GPU, its
// health check (NVML, idle GPU, the canary kernel against its calibration).
#pragma once

#include <memory>

#include "definitions/catalog.h"
#include "evaluator/eval_options.h"
#include "service/eval_backend.h"

namespace ptxbench {

/// The real evaluator on the GPU `base.device`; `base` holds the service's defaults (time limits,
/// GPU lock), on which each request's options apply.
std::unique_ptr<EvalBackend> make_gpu_backend(const Catalog& catalog, const EvalOptions& base);

}  // namespace ptxbench

#include "evaluator/workload_sweep.h"

namespace ptxbench {

SweepVerdict evaluate_sweep(Evaluator& evaluator, const Definition& def,
                            const std::vector<const Workload*>& workloads, const SweepCandidate& candidate,
                            const SweepOptions& options) {
  // Each workload by its uuid, which names exactly one.
  auto evaluate = [&](const Workload& w) {
    if (!candidate.trusted_library.empty())
      return evaluator.evaluate_trusted_library(def.name, w.uuid, candidate.trusted_library);
    return evaluator.evaluate_source(def.name, w.uuid, candidate.source, std::nullopt, candidate.language);
  };
  return run_sweep(def, workloads, evaluate, options);
}

}  // namespace ptxbench

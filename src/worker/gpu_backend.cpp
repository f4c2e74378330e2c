// The real evaluation backend of a service worker: one Evaluator per GPU (its workload state stays
// cached between tasks); the request's options apply to its evaluation only.
#include <cuda_runtime.h>

#include "service/eval_backend.h"
#include "worker/evaluator.h"

namespace ptxbench {
namespace {

class GpuEvalBackend final : public EvalBackend {
 public:
  GpuEvalBackend(const Catalog& catalog, int device) : m_evaluator(catalog, defaults(device)) {}

  ordered_json evaluate(const EvalRequest& r) override {
    try {
      return m_evaluator.evaluate_source(r.definition, r.workload, r.source, r.apply(m_evaluator.options())).to_json();
    } catch (const std::exception& e) {
      return {{"schema", "ptxbench.verdict"}, {"schema_version", 1}, {"status", "INFRA_ERROR"},
              {"message", std::string("evaluator failed: ") + e.what()}};
    }
  }

 private:
  static EvalOptions defaults(int device) {
    EvalOptions o;
    o.device = device;
    return o;
  }
  Evaluator m_evaluator;
};

}  // namespace

std::unique_ptr<EvalBackend> make_gpu_backend(const Catalog& catalog, int device) {
  return std::make_unique<GpuEvalBackend>(catalog, device);
}

}  // namespace ptxbench

// What a worker uses to evaluate one request: the real evaluator on its GPU, or — for CPU-only
// tests of the service (`--fake-gpus`) — a stand-in whose verdicts are dictated by markers in the
// source, so scheduling, durability and failure handling can be tested without a GPU.
#pragma once

#include <memory>

#include "common/json_check.h"
#include "service/eval_request.h"

namespace ptxbench {

class EvalBackend {
 public:
  virtual ~EvalBackend() = default;
  /// A verdict document; never throws for a bad candidate (our own failures become INFRA_ERROR).
  virtual ordered_json evaluate(const EvalRequest& request) = 0;
};

/// Markers: PTXB_FAKE_STATUS=<STATUS> (default PASSED), PTXB_FAKE_SECONDS=<s> (default 0.05),
/// PTXB_FAKE_CRASH (the worker process aborts), PTXB_FAKE_HANG (never returns).
class FakeEvalBackend final : public EvalBackend {
 public:
  explicit FakeEvalBackend(int device) : m_device(device) {}
  ordered_json evaluate(const EvalRequest& request) override;

 private:
  int m_device;
};

/// The real evaluator on one GPU (defined in the GPU library).
std::unique_ptr<EvalBackend> make_gpu_backend(const Catalog& catalog, int device);

}  // namespace ptxbench

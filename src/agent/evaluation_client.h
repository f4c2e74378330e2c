// Where the turn loop sends its candidates: the evaluation service over HTTP, or, for
// `ptxbench run --dry-run`, the service's fake backend inside this process (verdicts dictated by
// markers in the source: no GPU, no network, no queue on disk).
#pragma once

#include <memory>
#include <string>

#include "common/json_check.h"
#include "definitions/catalog.h"
#include "service/service_client.h"

namespace ptxbench {

/// Thread-safe: every trajectory of a run shares one.
class EvaluationClient {
 public:
  virtual ~EvaluationClient() = default;
  /// The task id of `request`; the same idempotency key gives the same task back.
  virtual std::string submit(const EvalRequest& request, const std::string& idempotency_key) = 0;
  /// The task once done, its verdict read.
  virtual FinishedEvaluation wait_done(const std::string& task_id, double timeout_s) = 0;
  /// Whether the evaluator no longer knows the task (then it is submitted again).
  virtual bool forgot(const std::string& task_id) = 0;
  /// Whether its verdicts are known, before any comes back, to be fake (no GPU measured them).
  [[nodiscard]] virtual bool fake() const = 0;
};

/// Over a service client (which must outlive it); `fake`: the service is known to run fake GPUs
/// (a local service started with --fake-gpus).
std::unique_ptr<EvaluationClient> make_service_evaluation(const ServiceClient& service, bool fake);
/// FakeEvalBackend in this process; requests are checked as the service checks them.
std::unique_ptr<EvaluationClient> make_fake_evaluation(const Catalog& catalog);

}  // namespace ptxbench

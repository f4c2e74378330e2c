// The service's HTTP JSON API (routes, validation, long-poll, Prometheus metrics) over the durable
// queue. Every bad request is a 4xx whose JSON names the problem; nothing is accepted half-way.
// With an access token, every route answers 401 to a request without it; submissions are bounded
// per client (429) and in total (503), and each one, accepted or refused, is logged.
//
//   POST /v1/evaluations            {definition, workload?, source, options?} -> 202 {id, state}
//   GET  /v1/evaluations/{id}[?wait=S]  state and, when done, the verdict (long-polls up to S ≤ 60 s)
//   GET  /v1/definitions            definitions and their workloads
//   GET  /v1/health                 this host's GPU workers, every host's workers, and the queue
//   GET  /metrics                   Prometheus text format
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "definitions/catalog.h"
#include "service/eval_request.h"
#include "service/host_registry.h"
#include "service/http_server.h"
#include "service/task_queue.h"

namespace ptxbench {

/// Header a client names itself with (1 to 64 of [A-Za-z0-9._:@-]); without it, the client is the
/// host part of its connection's address. Quotas count by this name; it is the client's word,
/// not an identity (everyone holding the token may claim any name).
inline constexpr const char* kClientHeader = "X-Ptxbench-Client";
/// Seconds a client is told to wait (Retry-After) when over its quota or the queue is full: cheap
/// to answer again, and evaluations finish every few seconds on a busy service.
inline constexpr int kRetryAfterS = 1;

struct ServiceApiOptions {
  EvalRequestLimits limits;
  AdmissionLimits admission;
  std::optional<std::string> token;  ///< when set, every request must carry "Authorization: Bearer <token>"
  /// Where new tasks wait: the check lane when this service runs check workers (compile-stage
  /// verdicts without a GPU worker), else the gpu lane.
  TaskLane entry_lane = TaskLane::gpu;
};

class ServiceApi {
 public:
  /// `gpu_status` returns the per-device worker state (WorkerPool::status()).
  ServiceApi(const Catalog& catalog, QueueConfig queue, ServiceApiOptions options, std::function<ordered_json()> gpu_status);
  HttpResponse handle(const HttpRequest& request);
  /// Makes long-polls return at once (before the HTTP server stops).
  void shutting_down() { m_stopping = true; }

 private:
  HttpResponse route(const HttpRequest& r);
  /// Logs the submission's outcome (who, what, which task) whatever it is.
  HttpResponse submit(const HttpRequest& r);
  struct Submission;
  HttpResponse admit(const HttpRequest& r, Submission& s);
  HttpResponse get(const std::string& id, const HttpRequest& r);
  HttpResponse definitions() const;
  HttpResponse health();
  HttpResponse metrics();
  TaskQueue& queue();        ///< one connection per handler thread
  HostRegistry& registry();  ///< one connection per handler thread

  const Catalog& m_catalog;
  QueueConfig m_queue;
  ServiceApiOptions m_options;
  std::function<ordered_json()> m_gpu_status;
  std::atomic<bool> m_stopping{false};
};

/// The JSON body of a task as the API returns it.
ordered_json task_json(const TaskRecord& t);

}  // namespace ptxbench

// The service's HTTP JSON API (routes, validation, long-poll, Prometheus metrics) over the durable
// queue. Every bad request is a 4xx whose JSON names the problem; nothing is accepted half-way.
//
//   POST /v1/evaluations            {definition, workload?, source, options?} -> 202 {id, state}
//   GET  /v1/evaluations/{id}[?wait=S]  state and, when done, the verdict (long-polls up to S ≤ 60 s)
//   GET  /v1/definitions            definitions and their workloads
//   GET  /v1/health                 per-GPU worker state and the queue
//   GET  /metrics                   Prometheus text format
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "definitions/catalog.h"
#include "service/eval_request.h"
#include "service/http_server.h"
#include "service/task_queue.h"

namespace ptxbench {

class ServiceApi {
 public:
  /// `gpu_status` returns the per-device worker state (WorkerPool::status()).
  ServiceApi(const Catalog& catalog, std::string db, EvalRequestLimits limits, std::function<ordered_json()> gpu_status);
  HttpResponse handle(const HttpRequest& request);
  /// Makes long-polls return at once (before the HTTP server stops).
  void shutting_down() { m_stopping = true; }

 private:
  HttpResponse submit(const HttpRequest& r);
  HttpResponse get(const std::string& id, const HttpRequest& r);
  HttpResponse definitions() const;
  HttpResponse health();
  HttpResponse metrics();
  TaskQueue& queue();  ///< one connection per handler thread

  const Catalog& m_catalog;
  std::string m_db;
  EvalRequestLimits m_limits;
  std::function<ordered_json()> m_gpu_status;
  std::atomic<bool> m_stopping{false};
};

/// The JSON body of a task as the API returns it.
ordered_json task_json(const TaskRecord& t);

}  // namespace ptxbench

// A client of the evaluation service over HTTP (libcurl): submit, long-poll for the verdict, read
// health. Used by `ptxbench eval --service URL`, the agent, and the service's own tests.
#pragma once

#include <string>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

struct HttpResult {
  long status = 0;
  std::string body;
};

class ServiceClient {
 public:
  /// `base_url` like "http://127.0.0.1:8742".
  explicit ServiceClient(std::string base_url);

  /// Raw request (tests). Throws Error("service client", ...) when the server cannot be reached.
  HttpResult request(const std::string& method, const std::string& path, const std::string& body = "",
                     double timeout_s = 90, const std::vector<std::string>& headers = {}) const;
  /// POST /v1/evaluations; returns the task id. A 4xx becomes InputError with the server's message.
  /// With an idempotency key, resending the same request (after a lost answer) returns the same id.
  std::string submit(const ordered_json& body, const std::string& idempotency_key = "") const;
  /// GET /v1/evaluations/{id}?wait=...: the task JSON (state, and the verdict once done).
  ordered_json get(const std::string& id, double wait_s = 0) const;
  /// Long-polls until the task is done or `timeout_s` passes (then throws Error).
  ordered_json wait_done(const std::string& id, double timeout_s) const;

 private:
  std::string m_base;
};

}  // namespace ptxbench

// A client of the evaluation service over HTTP (libcurl): submit, long-poll for the verdict, read
// health. Used by `ptxbench eval --service URL`, `suite load`, the agent, and the service's tests.
// It sends the access token and the client's name with every request, waits when the service
// says it is busy (429/503 with Retry-After), and turns a 401 into a clear AccessDenied.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json_check.h"
#include "service/eval_request.h"
#include "verdict/verdict.h"

namespace ptxbench {

struct HttpResult {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  ///< names lower-cased
};

/// The service stayed over the client's quota or full for longer than the client would wait.
class ServiceBusy : public Error {
 public:
  using Error::Error;
};

/// The service could not be reached (connection refused, unknown host, no answer in time) or
/// failed on its side (a 5xx): the host's or the service's problem, not the request's (exit 3).
/// The message names the service's URL.
class ServiceUnreachable : public EnvironmentError {
 public:
  using EnvironmentError::EnvironmentError;
};

struct ServiceClientOptions {
  std::optional<std::string> token;  ///< sent as "Authorization: Bearer <token>"
  std::string client_name;           ///< sent as X-Ptxbench-Client when not empty
  double busy_wait_s = 600;          ///< how long submit() keeps honouring 429/503 Retry-After
};

/// A client's options as the CLI gives them: the token of `token_file` (else $PTXBENCH_TOKEN;
/// load_access_token's checks and errors) and the name in $PTXBENCH_CLIENT (else none: the
/// service names the client by its address).
ServiceClientOptions service_client_options(const std::string& token_file);

/// A finished evaluation as the service answered it.
struct FinishedEvaluation {
  std::string id;
  Status status = Status::INFRA_ERROR;  ///< the verdict's status (the task's, when it has no verdict)
  /// The verdict; unset when the task finished without one or with one this build cannot read
  /// (`problem` says which).
  std::optional<Verdict> verdict;
  std::string problem;
  ordered_json task;  ///< the service's task document (worker, attempts, times), for logs and tests

  /// The verdict, or a bare one of `status` saying why there is none.
  [[nodiscard]] Verdict verdict_or_bare() const;
};

/// A done task's document read: its verdict parsed (Verdict::from_json), its status typed.
FinishedEvaluation read_finished_task(const ordered_json& task);

class ServiceClient {
 public:
  /// `base_url` like "http://127.0.0.1:8742".
  explicit ServiceClient(std::string base_url, ServiceClientOptions options = {});

  /// Raw request (tests): any status is returned as it came. Throws ServiceUnreachable naming the
  /// URL when the server cannot be reached.
  HttpResult request(const std::string& method, const std::string& path, const std::string& body = "",
                     double timeout_s = 90, const std::vector<std::string>& headers = {}) const;
  /// POST /v1/evaluations; returns the task id. A 401 is AccessDenied, another 4xx an InputError
  /// with the server's message; 429/503 with Retry-After are waited out for up to busy_wait_s,
  /// then ServiceBusy. With an idempotency key, resending the same request (after a lost answer)
  /// returns the same id.
  std::string submit(const EvalRequest& request, const std::string& idempotency_key = "") const;
  /// submit() of a request body as given: a FlashInfer-Bench Solution ("solution"), or a body
  /// the service should refuse (tests of its validation).
  std::string submit_body(const ordered_json& body, const std::string& idempotency_key = "") const;
  /// GET /v1/evaluations/{id}?wait=...: the task JSON (state, and the verdict once done).
  ordered_json get(const std::string& id, double wait_s = 0) const;
  /// Long-polls until the task is done or `timeout_s` passes (then throws Error).
  FinishedEvaluation wait_done(const std::string& id, double timeout_s) const;
  /// Whether the service no longer knows task `id` (404: expired from its queue, a new queue): the
  /// caller submits its request again. Other answers are false; an unreachable service throws.
  bool forgot(const std::string& id) const;
  /// GET /v1/definitions: the definitions the service knows.
  ordered_json definitions() const;
  /// Fails before any work when the service is away, refuses our token (AccessDenied, as is) or
  /// does not serve one of `wanted`: EnvironmentError(`who`, ...) naming the service and definition.
  void require_definitions(const std::vector<std::string>& wanted, const std::string& who) const;

  [[nodiscard]] const std::string& base_url() const noexcept { return m_base; }

 private:
  /// Throws AccessDenied for a 401, saying whether a token was sent and how to give one.
  void check_access(const HttpResult& r) const;
  std::string m_base;
  ServiceClientOptions m_options;
};

}  // namespace ptxbench

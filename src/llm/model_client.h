// Model clients (docs/design.md §6): one interface over OpenAI-compatible chat completions (hosted OpenAI,
// vLLM, SGLang) and the Anthropic Messages API, with strict configuration, retries that honour the
// provider's retry-after, and token accounting. docs/agent.md describes the config and the policy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llm/chat.h"
#include "llm/retry_policy.h"
#include "common/error.h"
#include "common/json_check.h"

namespace ptxbench {

enum class Provider { openai, anthropic };
[[nodiscard]] std::string_view to_string(Provider provider);

/// One model endpoint. Read with model_config_from_json; the API key itself is never part of it,
/// only the name of the environment variable that holds it.
struct ModelConfig {
  Provider provider = Provider::openai;
  /// OpenAI: the URL that "/chat/completions" is appended to ("http://127.0.0.1:8000/v1");
  /// Anthropic: the one "/v1/messages" is appended to. No trailing slash.
  std::string base_url;
  std::string model;
  std::string api_key_env;  ///< "": send no key (a local vLLM/SGLang server)
  std::optional<int64_t> max_tokens;  ///< required for Anthropic
  /// OpenAI only: "max_tokens" (vLLM, SGLang) or "max_completion_tokens" (hosted OpenAI's
  /// reasoning models refuse max_tokens); the default depends on base_url.
  std::string max_tokens_field;
  std::optional<double> temperature;
  std::optional<double> top_p;
  double timeout_s = 900;        ///< one attempt, connection to last byte (non-streaming: whole answer)
  double connect_timeout_s = 10;
  RetryPolicy retry;
  std::string anthropic_version = "2023-06-01";  ///< Anthropic only: the anthropic-version header
  /// Anthropic only: mark the system text and the last user message with cache_control so that
  /// later turns of a trajectory (and other trajectories of the same prompt) read them from cache.
  bool prompt_cache = true;
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra headers (never the key)
  ordered_json extra = ordered_json::object();  ///< top-level body fields, e.g. {"seed": 1}

  [[nodiscard]] ordered_json to_json() const;  ///< every field, defaults resolved
};

/// Strict: an unknown field, a wrong type or a value out of range is an InputError naming
/// `document` and the field ("model config: temperature: must be in [0, 2], got 3").
[[nodiscard]] ModelConfig model_config_from_json(const ordered_json& j, const std::string& document = "model config");

/// A call that failed for good: not retryable, or retryable but out of attempts.
/// what() names the provider, the HTTP status and the provider's own message.
class ModelApiError : public Error {
 public:
  enum class Kind {
    http,         ///< an error status from the provider
    spend_limit,  ///< quota, billing or spend limit reached (any status): waiting will not help
    timeout,      ///< no complete answer within timeout_s
    connection,   ///< could not connect, or the connection broke
    malformed,    ///< a success status with a body that is not a valid response
  };
  ModelApiError(Provider provider, Kind kind, long status, bool retryable, int attempts, std::string provider_message,
                const std::string& message)
      : Error(std::string(to_string(provider)), message),
        m_provider(provider), m_kind(kind), m_status(status), m_retryable(retryable), m_attempts(attempts),
        m_provider_message(std::move(provider_message)) {}

  [[nodiscard]] Provider provider() const noexcept { return m_provider; }
  [[nodiscard]] Kind kind() const noexcept { return m_kind; }
  [[nodiscard]] long status() const noexcept { return m_status; }  ///< 0 when no HTTP response came
  /// Whether this kind of failure is retried; true when the call gave up after max_retries.
  [[nodiscard]] bool retryable() const noexcept { return m_retryable; }
  [[nodiscard]] int attempts() const noexcept { return m_attempts; }
  [[nodiscard]] const std::string& provider_message() const noexcept { return m_provider_message; }

 private:
  Provider m_provider;
  Kind m_kind;
  long m_status;
  bool m_retryable;
  int m_attempts;
  std::string m_provider_message;
};

[[nodiscard]] std::string_view to_string(ModelApiError::Kind kind);

/// The agent's view of a model. Implementations must be thread-safe: many trajectories share one.
class ModelClient {
 public:
  virtual ~ModelClient() = default;
  /// One answer, after whatever retries the policy allows. Throws ModelApiError when the call fails
  /// for good and InputError for a request no provider would accept (no messages, a bad role).
  /// A truncated answer is returned normally with finish_reason == FinishReason::length.
  virtual ChatResponse complete(const ChatRequest& request) = 0;
};

struct ClientHooks {
  Sleeper sleep;           ///< waits between attempts; default sleep_seconds
  std::uint64_t seed = 0;  ///< jitter generator seed; 0: std::random_device
  /// Told of each failed attempt that will be retried (for logs and run records), with the wait
  /// before the next one. Called on the calling thread; must not throw.
  std::function<void(const ModelApiError& failure, double wait_s)> on_retry;
};

/// The client for `config.provider`. Reads the API key from the environment now, so a missing key
/// fails before any run starts: EnvironmentError naming the variable.
[[nodiscard]] std::unique_ptr<ModelClient> make_model_client(const ModelConfig& config, ClientHooks hooks = {});

/// "" when the key `config.api_key_env` names is set (or none is needed), else what is missing and
/// how to give it (the text of make_model_client's error; a run's preflight reports it as bad
/// input before anything is stored).
[[nodiscard]] std::string missing_api_key(const ModelConfig& config);

/// The line a run prints for each retried failure of a model call, so a down endpoint never stalls
/// a run silently: "[model] openai fake-model: attempt 2 of 9 failed (HTTP 503: overloaded);
/// retrying in 1.4 s".
[[nodiscard]] std::string retry_notice(const ModelConfig& config, const ModelApiError& failure, double wait_s);

/// Whether the endpoint can be reached at all: DNS, then a TCP (and, for https, TLS) connection to
/// base_url's host within connect_timeout_s. No request is sent: any request would either cost a
/// model call or be one that some servers (and the tests' fake providers) do not serve. Throws
/// EnvironmentError naming the URL and the reason.
void probe_model_endpoint(const ModelConfig& config);

}  // namespace ptxbench

// Model config validation, the libcurl transport and the retry loop shared by both providers; the
// wire formats themselves are in wire_format.cpp.
#include "llm/model_client.h"

#include <curl/curl.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>

#include "llm/wire_format.h"
#include "common/text.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "model client";
using Clock = std::chrono::steady_clock;

constexpr const char* kOpenAIDefaultUrl = "https://api.openai.com/v1";
constexpr const char* kAnthropicDefaultUrl = "https://api.anthropic.com";
// A chat answer is at most a few MB; a body beyond this is a broken server, not an answer.
constexpr std::size_t kMaxResponseBytes = 64 << 20;

std::string fmt_number(double x) { return fmt::format("{}", x); }

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string url_host(const std::string& url) {
  auto start = url.find("://");
  if (start == std::string::npos) return "";
  start += 3;
  auto end = url.find_first_of("/:", start);
  return lower(url.substr(start, end == std::string::npos ? std::string::npos : end - start));
}

bool is_hosted(const std::string& base_url) {
  std::string host = url_host(base_url);
  return host == "api.openai.com" || host == "api.anthropic.com";
}

// ---------------------------------------------------------------------------------------------
// Config

bool is_env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

bool is_header_name(const std::string& s) {
  static const std::string specials = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || specials.find(static_cast<char>(c)) != std::string::npos;
  });
}

std::string check_base_url(const JsonChecker& check, std::string url) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    check.fail("base_url", "must start with http:// or https://, got '" + url + "'");
  if (url.find_first_of("?# \t\r\n") != std::string::npos)
    check.fail("base_url", "must not contain a query, a fragment or whitespace: '" + url + "'");
  while (url.back() == '/') url.pop_back();
  if (url_host(url).empty()) check.fail("base_url", "has no host: '" + url + "'");
  return url;
}

// ---------------------------------------------------------------------------------------------
// Transport

/// Reusable curl handles: a handle keeps its connection open, so the next call skips the TCP and TLS
/// handshakes. Handles are never shared between threads at once.
class CurlPool {
 public:
  CurlPool() = default;
  ~CurlPool() {
    for (CURL* h : m_idle) curl_easy_cleanup(h);
  }
  CurlPool(const CurlPool&) = delete;
  CurlPool& operator=(const CurlPool&) = delete;

  CURL* take() {
    {
      std::lock_guard lock(m_mutex);
      if (!m_idle.empty()) {
        CURL* h = m_idle.back();
        m_idle.pop_back();
        curl_easy_reset(h);  // options go, the connection cache stays
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (!h) throw Error(kLib, "curl_easy_init failed");
    return h;
  }
  void give(CURL* h) {
    std::lock_guard lock(m_mutex);
    m_idle.push_back(h);
  }

 private:
  std::mutex m_mutex;
  std::vector<CURL*> m_idle;
};

struct Reply {
  long status = 0;
  std::map<std::string, std::string> headers;  ///< lower-case names
  std::string body;
};

struct TransportFailure {
  ModelApiError::Kind kind = ModelApiError::Kind::connection;
  bool retryable = true;
  std::string message;
};

struct BodySink {
  std::string* out;
  bool overflow = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* p) {
  auto* sink = static_cast<BodySink*>(p);
  if (sink->out->size() + size * n > kMaxResponseBytes) {
    sink->overflow = true;
    return 0;  // aborts the transfer
  }
  sink->out->append(data, size * n);
  return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* p) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(p);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    headers->clear();  // a new response (after 100 Continue): only the final one's headers count
  } else if (auto colon = line.find(':'); colon != std::string::npos) {
    std::string name = lower(line.substr(0, colon));
    auto b = line.find_first_not_of(" \t", colon + 1);
    std::string value = b == std::string::npos ? "" : line.substr(b);
    auto [it, inserted] = headers->emplace(name, value);
    if (!inserted) it->second += ", " + value;
  }
  return size * n;
}

void curl_global() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// ---------------------------------------------------------------------------------------------
// The client

class HttpModelClient final : public ModelClient {
 public:
  HttpModelClient(ModelConfig config, const std::string& key, ClientHooks hooks)
      : m_config(std::move(config)), m_sleep(hooks.sleep ? std::move(hooks.sleep) : Sleeper(sleep_seconds)),
        m_on_retry(std::move(hooks.on_retry)),
        m_rng(hooks.seed ? hooks.seed : std::random_device{}()) {
    curl_global();
    m_url = m_config.base_url + (m_config.provider == Provider::openai ? "/chat/completions" : "/v1/messages");
    m_headers = {"Content-Type: application/json", "Accept: application/json",
                 "Expect:",  // no 100-continue round trip before a large prompt
                 std::string("User-Agent: ptxbench/") + PTXBENCH_VERSION};
    if (m_config.provider == Provider::openai) {
      if (!key.empty()) m_headers.push_back("Authorization: Bearer " + key);
    } else {
      if (!key.empty()) m_headers.push_back("x-api-key: " + key);
      m_headers.push_back("anthropic-version: " + m_config.anthropic_version);
    }
    for (const auto& [name, value] : m_config.headers) m_headers.push_back(name + ": " + value);
  }

  ChatResponse complete(const ChatRequest& request) override {
    ordered_json body = m_config.provider == Provider::openai ? openai_request_body(m_config, request)
                                                              : anthropic_request_body(m_config, request);
    // replace: a model's earlier answer may hold invalid UTF-8; it must not make the call throw.
    const std::string payload = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::string model = body["model"].get<std::string>();
    const auto start = Clock::now();
    int malformed = 0;
    for (int attempt = 1;; ++attempt) {
      Failure f = try_once(payload, attempt, malformed, start);
      if (f.done) return std::move(f.response);
      if (!f.retryable || attempt > m_config.retry.max_retries) throw final_error(f, model, attempt, since(start));
      double wait;
      {
        std::lock_guard lock(m_rng_mutex);
        wait = retry_delay(m_config.retry, attempt - 1, f.told, m_rng);
      }
      if (m_on_retry) m_on_retry(final_error(f, model, attempt, since(start), wait), wait);
      m_sleep(wait);
    }
  }

 private:
  /// One attempt's outcome: the response (done), or why not and whether to go on.
  struct Failure {
    bool done = false;
    ChatResponse response;
    ModelApiError::Kind kind = ModelApiError::Kind::http;
    long status = 0;
    bool retryable = false;
    std::optional<double> told;    // the provider's retry-after
    std::string provider_message;  // the provider's words (or curl's / the parser's)
    std::string label;             // "HTTP 429 (rate_limit_error)"
  };

  Failure try_once(const std::string& payload, int attempt, int& malformed, Clock::time_point start) {
    Failure f;
    Reply reply;
    const auto t0 = Clock::now();
    if (auto failure = post(payload, reply)) {
      f.kind = failure->kind;
      f.retryable = failure->retryable;
      f.provider_message = failure->message;
      f.label = f.kind == ModelApiError::Kind::timeout     ? "timeout"
                : f.kind == ModelApiError::Kind::malformed ? "bad response"
                                                           : "connection failed";
      return f;
    }
    const double took = since(t0);
    f.status = reply.status;
    if (reply.status >= 200 && reply.status < 300) {
      try {
        f.response = m_config.provider == Provider::openai ? parse_openai_response(reply.body)
                                                           : parse_anthropic_response(reply.body);
        f.response.latency_s = took;
        f.response.attempts = attempt;
        f.response.total_s = since(start);
        f.done = true;
      } catch (const MalformedResponse& e) {
        f.kind = ModelApiError::Kind::malformed;
        f.retryable = malformed++ < m_config.retry.malformed_retries;
        f.provider_message = e.what();
        f.label = "malformed response (HTTP " + std::to_string(reply.status) + ")";
      }
      return f;
    }
    ProviderError pe = parse_provider_error(reply.body);
    f.kind = pe.spend_limit ? ModelApiError::Kind::spend_limit : ModelApiError::Kind::http;
    f.retryable = !pe.spend_limit && is_retryable_status(reply.status);
    f.told = retry_after_seconds(reply.headers);
    f.provider_message = pe.message;
    std::string what = !pe.code.empty() && pe.code != pe.type && pe.code != std::to_string(reply.status)
                           ? (pe.type.empty() ? pe.code : pe.type + ", " + pe.code)
                           : pe.type;
    f.label = (pe.spend_limit ? "spend limit reached: HTTP " : "HTTP ") + std::to_string(reply.status) +
              (what.empty() ? "" : " (" + what + ")");
    return f;
  }

  /// The error for a failed attempt: final (retry_in < 0) or about to be retried after retry_in s.
  ModelApiError final_error(const Failure& f, const std::string& model, int attempts, double total_s,
                            double retry_in = -1) const {
    const std::string total = fmt::format("{:.1f}", total_s);
    std::string outcome =
        retry_in >= 0 ? "attempt " + std::to_string(attempts) + ", retrying in " + fmt::format("{:.2f}", retry_in) + " s"
        : f.retryable ? "gave up after " + std::to_string(attempts) + " attempts in " + total + " s"
        : f.kind == ModelApiError::Kind::spend_limit ? "not retried: waiting will not help"
        : attempts > 1 ? "failed for good after " + std::to_string(attempts) + " attempts"
                       : "not retried";
    std::string message = f.label + ": " + f.provider_message + " [POST " + m_url + ", model " + model + "; " +
                          outcome + "]";
    return ModelApiError(m_config.provider, f.kind, f.status, f.retryable, attempts, f.provider_message, message);
  }

  /// Sends one request; fills `reply` on any HTTP response, or says why none came.
  std::optional<TransportFailure> post(const std::string& payload, Reply& reply) {
    CURL* h = m_pool.take();
    struct Give {
      CurlPool& pool;
      CURL* h;
      ~Give() { pool.give(h); }
    } give{m_pool, h};
    curl_slist* headers = nullptr;
    for (const auto& line : m_headers) headers = curl_slist_append(headers, line.c_str());
    struct FreeList {
      curl_slist* l;
      ~FreeList() { curl_slist_free_all(l); }
    } free_list{headers};

    char errbuf[CURL_ERROR_SIZE] = {};
    BodySink sink{&reply.body};
    curl_easy_setopt(h, CURLOPT_URL, m_url.c_str());
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &reply.headers);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, std::max(1L, std::lround(m_config.timeout_s * 1000)));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, std::lround(m_config.connect_timeout_s * 1000)));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    // A non-streaming answer can take many minutes of silence on the wire; keep-alive probes stop
    // NAT boxes and load balancers from dropping the connection meanwhile.
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
    if (rc == CURLE_OK) return std::nullopt;

    TransportFailure t;
    t.message = std::string(curl_easy_strerror(rc)) + (errbuf[0] ? std::string(" (") + errbuf + ")" : "");
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT:
        t.kind = ModelApiError::Kind::timeout;
        t.message = "no complete answer within " + fmt_number(m_config.timeout_s) + " s (timeout_s): " + t.message;
        break;
      case CURLE_WRITE_ERROR:
        if (sink.overflow) {
          t.kind = ModelApiError::Kind::malformed;
          t.retryable = false;
          t.message = "response body larger than " + std::to_string(kMaxResponseBytes >> 20) + " MiB";
        }
        break;
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_COULDNT_CONNECT:
      case CURLE_GOT_NOTHING:
      case CURLE_SEND_ERROR:
      case CURLE_RECV_ERROR:
      case CURLE_PARTIAL_FILE:
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_HTTP2:
      case CURLE_HTTP2_STREAM:
      case CURLE_WEIRD_SERVER_REPLY:
        break;  // transient: connection, retryable
      default:
        t.retryable = false;  // a bad URL, a certificate that does not verify, ...: will not change
        break;
    }
    return t;
  }

  ModelConfig m_config;
  std::string m_url;
  std::vector<std::string> m_headers;
  Sleeper m_sleep;
  std::function<void(const ModelApiError&, double)> m_on_retry;
  std::mutex m_rng_mutex;
  std::mt19937_64 m_rng;
  CurlPool m_pool;
};

}  // namespace

std::string_view to_string(Provider provider) { return provider == Provider::openai ? "openai" : "anthropic"; }

std::string_view to_string(ModelApiError::Kind kind) {
  switch (kind) {
    case ModelApiError::Kind::http: return "http";
    case ModelApiError::Kind::spend_limit: return "spend_limit";
    case ModelApiError::Kind::timeout: return "timeout";
    case ModelApiError::Kind::connection: return "connection";
    case ModelApiError::Kind::malformed: return "malformed";
  }
  return "http";
}

ordered_json ModelConfig::to_json() const {
  ordered_json j;
  j["provider"] = std::string(ptxbench::to_string(provider));
  j["base_url"] = base_url;
  j["model"] = model;
  j["api_key_env"] = api_key_env;
  if (max_tokens) j["max_tokens"] = *max_tokens;
  if (provider == Provider::openai) j["max_tokens_field"] = max_tokens_field;
  if (temperature) j["temperature"] = *temperature;
  if (top_p) j["top_p"] = *top_p;
  j["timeout_s"] = timeout_s;
  j["connect_timeout_s"] = connect_timeout_s;
  j.update(retry.to_json());
  if (provider == Provider::anthropic) {
    j["anthropic_version"] = anthropic_version;
    j["prompt_cache"] = prompt_cache;
  }
  ordered_json h = ordered_json::object();
  for (const auto& [name, value] : headers) h[name] = value;
  j["headers"] = std::move(h);
  j["extra"] = extra;
  return j;
}

ModelConfig model_config_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.only_fields(j, "", {"provider", "base_url", "model", "api_key_env", "max_tokens", "max_tokens_field",
                            "temperature", "top_p", "timeout_s", "connect_timeout_s", "max_retries", "backoff_base_s",
                            "backoff_cap_s", "retry_after_cap_s", "malformed_retries", "anthropic_version",
                            "prompt_cache", "headers", "extra"});
  ModelConfig c;
  std::string provider = check.string_field(j, "", "provider");
  if (provider == "openai") {
    c.provider = Provider::openai;
  } else if (provider == "anthropic") {
    c.provider = Provider::anthropic;
  } else {
    check.fail("provider", "expected \"openai\" (any OpenAI-compatible server) or \"anthropic\", got \"" + provider + "\"");
  }
  const bool openai = c.provider == Provider::openai;
  auto only_for = [&](const char* key, bool allowed) {
    if (j.contains(key) && !allowed)
      check.fail(key, std::string("only for provider \"") + (openai ? "anthropic" : "openai") + "\"");
  };

  c.base_url = check_base_url(check, check.optional_string(j, "", "base_url", openai ? kOpenAIDefaultUrl : kAnthropicDefaultUrl));
  c.model = check.string_field(j, "", "model");
  if (c.model.empty()) check.fail("model", "must not be empty");

  if (j.contains("api_key_env")) {
    c.api_key_env = check.string_field(j, "", "api_key_env");
    if (!c.api_key_env.empty() && !is_env_name(c.api_key_env))
      check.fail("api_key_env", "'" + c.api_key_env + "' is not an environment variable name");
    if (c.api_key_env.empty() && is_hosted(c.base_url))
      check.fail("api_key_env", "\"\" (no key) is for local servers; " + url_host(c.base_url) + " needs a key");
  } else {
    c.api_key_env = openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  }

  if (j.contains("max_tokens")) c.max_tokens = check.int_in(j, "", "max_tokens", 1, 10'000'000);
  if (!openai && !c.max_tokens) check.fail("max_tokens", "required for provider \"anthropic\"");
  only_for("max_tokens_field", openai);
  if (openai) {
    c.max_tokens_field = check.optional_string(
        j, "", "max_tokens_field", url_host(c.base_url) == "api.openai.com" ? "max_completion_tokens" : "max_tokens");
    if (c.max_tokens_field != "max_tokens" && c.max_tokens_field != "max_completion_tokens")
      check.fail("max_tokens_field", "expected \"max_tokens\" or \"max_completion_tokens\", got \"" + c.max_tokens_field + "\"");
  }
  if (j.contains("temperature")) c.temperature = check.number_in(j, "", "temperature", 0, openai ? 2 : 1);
  if (j.contains("top_p")) c.top_p = check.number_in(j, "", "top_p", 0, 1, true);
  if (j.contains("timeout_s")) c.timeout_s = check.number_in(j, "", "timeout_s", 0, 86400, true);
  if (j.contains("connect_timeout_s")) c.connect_timeout_s = check.number_in(j, "", "connect_timeout_s", 0, 600, true);

  RetryPolicy& r = c.retry;
  if (j.contains("max_retries")) r.max_retries = static_cast<int>(check.int_in(j, "", "max_retries", 0, 100));
  if (j.contains("backoff_base_s")) r.backoff_base_s = check.number_in(j, "", "backoff_base_s", 0, 3600);
  if (j.contains("backoff_cap_s")) r.backoff_cap_s = check.number_in(j, "", "backoff_cap_s", 0, 86400);
  if (r.backoff_cap_s < r.backoff_base_s)
    check.fail("backoff_cap_s", "must be at least backoff_base_s (" + fmt_number(r.backoff_base_s) + ")");
  if (j.contains("retry_after_cap_s")) r.retry_after_cap_s = check.number_in(j, "", "retry_after_cap_s", 0, 86400);
  if (j.contains("malformed_retries")) r.malformed_retries = static_cast<int>(check.int_in(j, "", "malformed_retries", 0, 100));

  only_for("anthropic_version", !openai);
  only_for("prompt_cache", !openai);
  if (!openai) {
    c.anthropic_version = check.optional_string(j, "", "anthropic_version", c.anthropic_version);
    if (c.anthropic_version.empty()) check.fail("anthropic_version", "must not be empty");
    if (j.contains("prompt_cache")) {
      c.prompt_cache = check.bool_field(j, "", "prompt_cache");
    }
  }

  if (j.contains("headers")) {
    const auto& h = j["headers"];
    check.require_object(h, "headers");
    for (auto it = h.begin(); it != h.end(); ++it) {
      std::string path = "headers." + it.key();
      std::string name = lower(it.key());
      if (!is_header_name(it.key())) check.fail(path, "not a valid header name");
      if (name == "authorization" || name == "x-api-key" || name == "api-key")
        check.fail(path, "keys never go in the config: name the environment variable that holds it in api_key_env");
      if (name == "content-type" || name == "content-length" || name == "host" || name == "anthropic-version" ||
          name == "expect" || name == "transfer-encoding")
        check.fail(path, "set by the client itself");
      if (!it->is_string()) check.fail(path, std::string("expected a string, got ") + it->type_name());
      std::string value = it->get<std::string>();
      if (value.find_first_of("\r\n") != std::string::npos || value.find('\0') != std::string::npos)
        check.fail(path, "value contains a line break or NUL");
      c.headers.emplace_back(it.key(), value);
    }
  }
  if (j.contains("extra")) {
    const auto& e = j["extra"];
    check.require_object(e, "extra");
    for (auto it = e.begin(); it != e.end(); ++it)
      if (is_reserved_body_field(it.key()))
        check.fail("extra." + it.key(), "set by the client itself: use the config field of that name, if any");
    c.extra = e;
  }
  return c;
}

std::string missing_api_key(const ModelConfig& config) {
  if (config.api_key_env.empty()) return "";
  const char* value = std::getenv(config.api_key_env.c_str());
  if (value && *value) return "";
  return "environment variable " + config.api_key_env + " is not set or empty; it should hold the " +
         std::string(to_string(config.provider)) + " API key for " + config.base_url +
         " (api_key_env). Export it, or set \"api_key_env\": \"\" for a local server that needs no key";
}

std::unique_ptr<ModelClient> make_model_client(const ModelConfig& config, ClientHooks hooks) {
  if (std::string missing = missing_api_key(config); !missing.empty()) throw EnvironmentError(kLib, missing);
  std::string key = config.api_key_env.empty() ? "" : std::getenv(config.api_key_env.c_str());
  return std::make_unique<HttpModelClient>(config, key, std::move(hooks));
}

std::string retry_notice(const ModelConfig& config, const ModelApiError& failure, double wait_s) {
  std::string reason;
  switch (failure.kind()) {
    case ModelApiError::Kind::http: reason = "HTTP " + std::to_string(failure.status()); break;
    case ModelApiError::Kind::spend_limit: reason = "spend limit, HTTP " + std::to_string(failure.status()); break;
    case ModelApiError::Kind::timeout: reason = "timeout"; break;
    case ModelApiError::Kind::connection: reason = "connection failed"; break;
    case ModelApiError::Kind::malformed: reason = "malformed response"; break;
  }
  std::string said = failure.provider_message();
  if (said.size() > 160) said = said.substr(0, 160) + "...";
  if (!said.empty()) reason += ": " + said;
  return fmt::format("[model] {} {}: attempt {} of {} failed ({}); retrying in {:.1f} s", to_string(config.provider),
                     config.model, failure.attempts(), config.retry.max_retries + 1, reason, wait_s);
}

void probe_model_endpoint(const ModelConfig& config) {
  curl_global();
  CURL* h = curl_easy_init();
  if (!h) throw Error(kLib, "curl_easy_init failed");
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h, CURLOPT_URL, config.base_url.c_str());
  curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, std::lround(config.connect_timeout_s * 1000)));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  CURLcode rc = curl_easy_perform(h);
  curl_easy_cleanup(h);
  if (rc != CURLE_OK)
    throw EnvironmentError(kLib, "the model endpoint " + config.base_url + " (" + std::string(to_string(config.provider)) +
                                     ", model " + config.model + ") cannot be reached: " + curl_easy_strerror(rc) +
                                     (errbuf[0] ? std::string(" (") + errbuf + ")" : "") +
                                     "; start the server or fix base_url");
}

}  // namespace ptxbench

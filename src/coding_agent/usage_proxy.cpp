// The proxy's routing, its libcurl pass-through (streamed answers forwarded piece by piece as they
// arrive) and the usage meter of the three wire formats.
#include "coding_agent/usage_proxy.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/text.h"

namespace ptxbench::coding_agent {
namespace {

constexpr const char* kLib = "proxy";
// What is kept of a non-event body to read its usage: answers are far smaller; past this the
// body is still forwarded whole (non-streamed bodies are bounded by max_request_bytes' twin below).
constexpr std::size_t kMaxMeteredBody = 64 << 20;
constexpr std::size_t kMaxWholeBody = 256 << 20;

using Headers = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------------------------
// Usage in each format

int64_t count_of(const ordered_json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  return std::max<int64_t>(0, it->get<int64_t>());
}

const ordered_json& member(const ordered_json& j, const char* key) {
  static const ordered_json null;
  if (!j.is_object()) return null;
  auto it = j.find(key);
  return it == j.end() ? null : *it;
}

/// OpenAI's usage: <in>_tokens (cached included, in <in>_tokens_details.cached_tokens) and
/// <out>_tokens (reasoning included, in <out>_tokens_details.reasoning_tokens).
CallUsage openai_usage(const ordered_json& u, const std::string& in, const std::string& out) {
  CallUsage c;
  c.prompt_tokens = count_of(u, (in + "_tokens").c_str());
  c.completion_tokens = count_of(u, (out + "_tokens").c_str());
  c.cached_tokens = count_of(member(u, (in + "_tokens_details").c_str()), "cached_tokens");
  c.reasoning_tokens = count_of(member(u, (out + "_tokens_details").c_str()), "reasoning_tokens");
  c.reported = true;
  return c;
}

/// OpenAI chat completions: prompt_tokens, completion_tokens.
CallUsage chat_usage(const ordered_json& u) { return openai_usage(u, "prompt", "completion"); }

/// OpenAI Responses: input_tokens, output_tokens.
CallUsage responses_usage(const ordered_json& u) { return openai_usage(u, "input", "output"); }

/// Anthropic: input_tokens excludes both cache parts; our prompt_tokens is every input token
/// (wire_format.cpp's convention). Fields absent from `u` (a message_delta's) leave `c` as it was.
void merge_anthropic_usage(CallUsage& c, const ordered_json& u, int64_t& input, int64_t& cache_write, int64_t& cache_read) {
  if (!u.is_object()) return;
  if (u.contains("input_tokens")) input = count_of(u, "input_tokens");
  if (u.contains("cache_creation_input_tokens")) cache_write = count_of(u, "cache_creation_input_tokens");
  if (u.contains("cache_read_input_tokens")) cache_read = count_of(u, "cache_read_input_tokens");
  if (u.contains("output_tokens")) c.completion_tokens = count_of(u, "output_tokens");
  c.prompt_tokens = input + cache_write + cache_read;
  c.cached_tokens = cache_read;
  c.reported = true;
}

std::string string_member(const ordered_json& j, const char* key) {
  const ordered_json& m = member(j, key);
  return m.is_string() ? m.get<std::string>() : "";
}

// ---------------------------------------------------------------------------------------------
// Routing

struct Route {
  int64_t trajectory = 0;
  WireApi api = WireApi::other;
  bool anthropic = false;  ///< goes to the Anthropic upstream
  std::string rest;        ///< the path after /v1/: "chat/completions", "messages", "models", ...
};

std::optional<Route> route_of(const std::string& path) {
  Route r;
  std::string_view p = path;
  if (p.rfind("/t/", 0) == 0) {
    p.remove_prefix(3);
    std::size_t slash = p.find('/');
    if (slash == 0 || slash == std::string_view::npos || slash > 18) return std::nullopt;
    for (std::size_t i = 0; i < slash; ++i)
      if (!std::isdigit(static_cast<unsigned char>(p[i]))) return std::nullopt;
    r.trajectory = std::stoll(std::string(p.substr(0, slash)));
    p.remove_prefix(slash);
  }
  if (p.rfind("/v1/", 0) != 0) return std::nullopt;
  r.rest = std::string(p.substr(4));
  if (r.rest.empty() || r.rest.find("..") != std::string::npos) return std::nullopt;
  if (r.rest == "chat/completions") r.api = WireApi::chat_completions;
  else if (r.rest == "responses") r.api = WireApi::responses;
  else if (r.rest == "messages") r.api = WireApi::anthropic_messages;
  r.anthropic = r.rest == "messages" || r.rest.rfind("messages/", 0) == 0;
  return r;
}

/// An error answer in the caller's format, so its client reports it as it would the provider's.
HttpResponse error_answer(int status, bool anthropic, const std::string& message) {
  ordered_json body = anthropic ? ordered_json{{"type", "error"}, {"error", {{"type", "api_error"}, {"message", message}}}}
                                : ordered_json{{"error", {{"message", message}, {"type", "proxy_error"}, {"code", nullptr}}}};
  return HttpResponse::json(status, body.dump());
}

bool is_hop_or_framing(const std::string& lower_name) {
  static const char* const names[] = {"host",          "content-length", "connection", "keep-alive", "transfer-encoding",
                                      "te",            "trailer",        "upgrade",    "expect",     "accept-encoding",
                                      "proxy-connection", "proxy-authorization"};
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return lower_name == n; });
}

bool is_key_header(const std::string& lower_name) {
  return lower_name == "authorization" || lower_name == "x-api-key" || lower_name == "api-key";
}

std::string read_key(const std::string& env, const char* which) {
  if (env.empty()) return "";
  const char* v = std::getenv(env.c_str());
  if (!v || !*v)
    throw EnvironmentError(kLib, "environment variable " + env + " is not set or empty; it should hold the " + which +
                                     " API key the proxy adds to the agent's calls");
  return v;
}

void curl_global() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// ---------------------------------------------------------------------------------------------
// One upstream call

struct Transfer {
  CURL* curl = nullptr;
  HttpStreamWriter* out = nullptr;
  bool stream = false;  ///< forward the body as it arrives
  const std::atomic<bool>* stopping = nullptr;
  UsageMeter meter;
  Headers headers;      ///< the final response's, names as sent
  std::string content_type = "application/json";
  bool event_stream = false;
  bool head_seen = false;
  bool client_gone = false;
  bool too_large = false;
  std::string body;     ///< a whole body (not streamed), or an event-less body kept for its usage
  std::string begin_error;

  explicit Transfer(WireApi api) : meter(api) {}

  void on_head() {
    head_seen = true;
    for (const auto& [name, value] : headers)
      if (lower(name) == "content-type") content_type = value;
    event_stream = lower(content_type).find("text/event-stream") != std::string::npos;
  }
  [[nodiscard]] long status() const {
    long s = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &s);
    return s;
  }
  [[nodiscard]] Headers forwarded_headers() const {
    Headers h;
    for (const auto& [name, value] : headers) {
      std::string key = lower(name);
      if (is_hop_or_framing(key) || key == "content-type" || key == "content-encoding" || key == "cache-control") continue;
      h.emplace_back(name, value);
    }
    return h;
  }
};

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    t->headers.clear();  // a new response (after 100 Continue): only the final one's count
  } else if (auto colon = line.find(':'); colon != std::string::npos) {
    auto b = line.find_first_not_of(" \t", colon + 1);
    t->headers.emplace_back(line.substr(0, colon), b == std::string::npos ? "" : line.substr(b));
  }
  return size * n;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  const std::size_t bytes = size * n;
  std::string_view piece(data, bytes);
  if (!t->head_seen) t->on_head();
  if (t->event_stream) t->meter.feed_events(piece);
  if (!t->stream) {
    if (t->body.size() + bytes > kMaxWholeBody) {
      t->too_large = true;
      return 0;  // aborts: a whole answer this large is a broken upstream
    }
    t->body.append(piece);
    return bytes;
  }
  if (!t->event_stream && t->body.size() + bytes <= kMaxMeteredBody) t->body.append(piece);  // for its usage
  if (!t->out->begun()) {
    long status = t->status();
    if (status < 200 || status > 599) status = 502;
    try {
      if (!t->out->begin(static_cast<int>(status), t->content_type, t->forwarded_headers())) {
        t->client_gone = true;
        return 0;
      }
    } catch (const std::exception& e) {
      t->begin_error = e.what();
      return 0;
    }
  }
  if (!t->out->write(piece)) {
    t->client_gone = true;
    return 0;
  }
  return bytes;
}

int on_progress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(p);
  return t->stopping->load() ? 1 : 0;
}

std::string query_string(CURL* curl, const std::map<std::string, std::string>& query) {
  std::string q;
  for (const auto& [k, v] : query) {
    char* ek = curl_easy_escape(curl, k.c_str(), static_cast<int>(k.size()));
    char* ev = curl_easy_escape(curl, v.c_str(), static_cast<int>(v.size()));
    q += (q.empty() ? "?" : "&") + std::string(ek ? ek : "") + "=" + std::string(ev ? ev : "");
    curl_free(ek);
    curl_free(ev);
  }
  return q;
}

/// What the proxy reads of a call's request body, and the body it sends on.
struct CallBody {
  std::string body;
  std::string model;
  bool stream = false;
};

/// Reads the model and the stream flag of a metered call; streamed chat completions are made to
/// report their usage (stream_options.include_usage) when `inject_usage`.
CallBody read_call_body(const std::string& body, WireApi api, bool inject_usage) {
  CallBody out{body, "", false};
  if (api == WireApi::other) return out;
  ordered_json j = ordered_json::parse(body, nullptr, false);
  if (!j.is_object()) return out;
  out.model = string_member(j, "model");
  out.stream = member(j, "stream").is_boolean() && j["stream"].get<bool>();
  if (out.stream && api == WireApi::chat_completions && inject_usage) {
    const ordered_json& so = member(j, "stream_options");
    if (!(so.is_object() && member(so, "include_usage").is_boolean() && so["include_usage"].get<bool>())) {
      j["stream_options"]["include_usage"] = true;
      out.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  return out;
}

/// One libcurl call to the upstream: the handle, its header list, and the transfer it feeds.
struct Upstream {
  Transfer t;
  curl_slist* headers = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {};

  explicit Upstream(WireApi api) : t(api) {
    t.curl = curl_easy_init();
    if (!t.curl) throw Error(kLib, "curl_easy_init failed");
  }
  ~Upstream() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(t.curl);
  }
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  /// The agent's headers but hop-by-hop and framing ones, with the real key in place of its own.
  void set_headers(const std::map<std::string, std::string>& request_headers, const std::string& key, bool anthropic) {
    for (const auto& [name, value] : request_headers) {
      if (is_hop_or_framing(name) || (!key.empty() && is_key_header(name))) continue;
      headers = curl_slist_append(headers, (name + ": " + value).c_str());
    }
    if (!key.empty())
      headers = curl_slist_append(headers, (anthropic ? "x-api-key: " + key : "Authorization: Bearer " + key).c_str());
    headers = curl_slist_append(headers, "Expect:");
  }

  /// The request (`body` must outlive the call) and the callbacks that pass the answer through.
  void configure(const std::string& url, const std::string& method, const std::string& body, const ProxyConfig& config) {
    CURL* curl = t.curl;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (method == "GET" || method == "HEAD") {
      curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
      if (method == "HEAD") curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // curl decodes; the agent gets identity
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config.connect_timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(config.call_timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  }

  /// Why a call that did not end with CURLE_OK failed, in the words the ledger and the agent get.
  [[nodiscard]] std::string failure(CURLcode rc, bool stopping) const {
    return t.client_gone              ? "the agent closed the connection before the answer ended"
           : !t.begin_error.empty()   ? "the answer's head could not be forwarded: " + t.begin_error
           : stopping                 ? "the proxy stopped during the call"
           : t.too_large              ? "the answer is larger than " + std::to_string(kMaxWholeBody >> 20) + " MiB"
                                      : std::string(curl_easy_strerror(rc)) + (errbuf[0] ? std::string(" (") + errbuf + ")" : "");
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// UsageMeter

UsageMeter::UsageMeter(WireApi api) : m_api(api) {}

void UsageMeter::feed_events(std::string_view bytes) {
  while (!bytes.empty()) {
    std::size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      m_partial.append(bytes);
      return;
    }
    m_partial.append(bytes.substr(0, nl));
    bytes.remove_prefix(nl + 1);
    if (!m_partial.empty() && m_partial.back() == '\r') m_partial.pop_back();
    on_line(m_partial);
    m_partial.clear();
  }
}

void UsageMeter::on_line(std::string_view line) {
  if (line.empty()) {
    dispatch();
    return;
  }
  if (line.front() == ':') return;  // a comment (keep-alive)
  std::size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (m_has_data) m_data += '\n';
    m_data.append(value);
    m_has_data = true;
  } else if (field == "event") {
    m_event = std::string(value);
  }
}

void UsageMeter::dispatch() {
  if (m_has_data && m_data != "[DONE]") {
    ++m_events;
    ordered_json j = ordered_json::parse(m_data, nullptr, false);
    if (!j.is_discarded()) on_json(j, m_event);
  }
  m_event.clear();
  m_data.clear();
  m_has_data = false;
}

void UsageMeter::finish() {
  if (!m_partial.empty()) {
    on_line(m_partial);
    m_partial.clear();
  }
  dispatch();
}

void UsageMeter::read_body(std::string_view body) {
  ordered_json j = ordered_json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  if (m_api == WireApi::anthropic_messages) {
    int64_t input = 0, write = 0, read = 0;
    if (member(j, "usage").is_object()) merge_anthropic_usage(m_usage, j["usage"], input, write, read);
  } else if (member(j, "usage").is_object()) {
    m_usage = m_api == WireApi::responses ? responses_usage(j["usage"]) : chat_usage(j["usage"]);
  }
  if (auto m = string_member(j, "model"); !m.empty()) m_model = m;
}

void UsageMeter::on_json(const ordered_json& j, const std::string& event) {
  if (!j.is_object()) return;
  std::string type = string_member(j, "type");
  if (type.empty()) type = event;
  switch (m_api) {
    case WireApi::chat_completions:
    case WireApi::other:
      // The last chunk carries the usage (stream_options.include_usage); some servers put it on
      // every chunk, cumulative: the last one wins either way.
      if (member(j, "usage").is_object()) m_usage = chat_usage(j["usage"]);
      if (auto m = string_member(j, "model"); !m.empty()) m_model = m;
      break;
    case WireApi::responses: {
      const ordered_json& r = member(j, "response");
      if (auto m = string_member(r, "model"); !m.empty()) m_model = m;
      // response.completed, or how a call ends short: incomplete, failed.
      if (member(r, "usage").is_object()) m_usage = responses_usage(r["usage"]);
      break;
    }
    case WireApi::anthropic_messages: {
      // message_start: the input side (and a first output count); message_delta: the output so far.
      if (type == "message_start") {
        const ordered_json& m = member(j, "message");
        if (auto name = string_member(m, "model"); !name.empty()) m_model = name;
        m_anthropic_input = m_anthropic_write = m_anthropic_read = 0;
        merge_anthropic_usage(m_usage, member(m, "usage"), m_anthropic_input, m_anthropic_write, m_anthropic_read);
      } else if (type == "message_delta") {
        merge_anthropic_usage(m_usage, member(j, "usage"), m_anthropic_input, m_anthropic_write, m_anthropic_read);
      }
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Config

UpstreamConfig upstream_config_from_json(const ordered_json& j, const std::string& document) {
  JsonChecker check(document);
  check.require_object(j, "");
  check.only_fields(j, "", {"openai_base_url", "openai_key_env", "anthropic_base_url", "anthropic_key_env"});
  UpstreamConfig u;
  u.openai_base_url = check.optional_string(j, "", "openai_base_url", "");
  u.openai_key_env = check.optional_string(j, "", "openai_key_env", "");
  u.anthropic_base_url = check.optional_string(j, "", "anthropic_base_url", "");
  u.anthropic_key_env = check.optional_string(j, "", "anthropic_key_env", "");
  for (auto* url : {&u.openai_base_url, &u.anthropic_base_url}) {
    if (url->empty()) continue;
    const char* field = url == &u.openai_base_url ? "openai_base_url" : "anthropic_base_url";
    if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0)
      check.fail(field, "must start with http:// or https://, got '" + *url + "'");
    while (url->back() == '/') url->pop_back();
  }
  if (u.openai_base_url.empty() && u.anthropic_base_url.empty())
    check.fail("", "name at least one upstream: openai_base_url or anthropic_base_url");
  return u;
}

// ---------------------------------------------------------------------------------------------
// UsageProxy

UsageProxy::UsageProxy(ProxyConfig config, UsageLedger& ledger) : m_config(std::move(config)), m_ledger(ledger) {
  curl_global();
  m_openai_key = read_key(m_config.upstream.openai_key_env, "OpenAI");
  m_anthropic_key = read_key(m_config.upstream.anthropic_key_env, "Anthropic");
  HttpServerOptions o;
  o.host = m_config.host;
  o.port = m_config.port;
  o.threads = m_config.threads;
  o.max_body_bytes = m_config.max_request_bytes;
  o.read_timeout_s = 60;    // a large request body over loopback, and a client slow to read a stream
  o.idle_timeout_s = 300;   // agents keep their connection between calls
  m_server = std::make_unique<HttpServer>(
      o, StreamingHttpHandler([this](const HttpRequest& r, HttpStreamWriter& out) { return handle(r, out); }));
  m_server->start();
}

UsageProxy::~UsageProxy() { stop(); }

void UsageProxy::stop() {
  m_stopping = true;
  if (m_server) m_server->stop();
}

std::string UsageProxy::url() const { return "http://" + m_server->address(); }
std::string UsageProxy::openai_base_url(int64_t trajectory_id) const {
  return url() + "/t/" + std::to_string(trajectory_id) + "/v1";
}
std::string UsageProxy::anthropic_base_url(int64_t trajectory_id) const {
  return url() + "/t/" + std::to_string(trajectory_id);
}

std::optional<HttpResponse> UsageProxy::handle(const HttpRequest& request, HttpStreamWriter& out) {
  std::optional<Route> route = route_of(request.path);
  if (!route)
    return error_answer(404, false,
                        "ptxbench proxy: no route for " + request.path +
                            " (expected /t/<trajectory>/v1/chat/completions, /v1/responses or /v1/messages)");
  const std::string& base = route->anthropic ? m_config.upstream.anthropic_base_url : m_config.upstream.openai_base_url;
  if (base.empty())
    return error_answer(502, route->anthropic,
                        std::string("ptxbench proxy: no ") + (route->anthropic ? "Anthropic" : "OpenAI") +
                            " upstream is configured for " + request.path);
  const std::string target = route->anthropic ? base + "/v1/" + route->rest : base + "/" + route->rest;
  const CallBody call_body = read_call_body(request.body, route->api, m_config.inject_stream_usage);

  Upstream up(route->api);
  up.t.out = &out;
  up.t.stream = call_body.stream;
  up.t.stopping = &m_stopping;
  const std::string& key = route->anthropic ? m_anthropic_key : m_openai_key;
  up.set_headers(request.headers, key, route->anthropic);
  const std::string url = target + query_string(up.t.curl, request.query);
  up.configure(url, request.method, call_body.body, m_config);

  const bool metered = route->api != WireApi::other;
  const int64_t call = metered ? m_ledger.begin_call(route->trajectory, route->api, call_body.model, call_body.stream) : 0;
  CURLcode rc = curl_easy_perform(up.t.curl);
  ++m_calls;
  Transfer& t = up.t;
  const long status = t.status();
  if (t.event_stream) t.meter.finish();
  else if (!t.body.empty()) t.meter.read_body(t.body);
  const std::string error = rc == CURLE_OK ? std::string() : up.failure(rc, m_stopping);
  if (metered) m_ledger.finish_call(call, static_cast<int>(status), t.meter.model(), t.meter.usage(), error);
  if (out.begun()) {
    if (!error.empty()) throw Error(kLib, "call to " + target + " broke off: " + error);  // drops the connection
    return std::nullopt;
  }
  if (!error.empty())
    return error_answer(t.too_large ? 502 : (rc == CURLE_OPERATION_TIMEDOUT ? 504 : 502), route->anthropic,
                        "ptxbench proxy: the call to " + target + " failed: " + error);
  HttpResponse r;
  r.status = status >= 200 && status <= 599 ? static_cast<int>(status) : 502;
  r.content_type = t.content_type;
  r.body = std::move(t.body);
  r.headers = t.forwarded_headers();
  return r;
}

}  // namespace ptxbench::coding_agent

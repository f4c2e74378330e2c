#include "service/service_api.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>

#include "common/error.h"
#include "common/sha256.h"
#include "service/access_token.h"
#include "service/redis_client.h"
#include "service/service_log.h"
#include "service/service_metrics.h"

namespace ptxbench {
namespace {

constexpr double kMaxWaitS = 60.0;
constexpr std::size_t kMaxClientName = 64;

std::string json_text(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

HttpResponse error(int status, const std::string& message) {
  return HttpResponse::json(status, json_text(ordered_json{{"error", message}}));
}

HttpResponse retry_later(int status, const std::string& message) {
  HttpResponse r = error(status, message);
  r.headers.emplace_back("Retry-After", std::to_string(kRetryAfterS));
  return r;
}

std::string header(const HttpRequest& r, const std::string& lower_name) {
  auto it = r.headers.find(lower_name);
  return it == r.headers.end() ? std::string() : it->second;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "10.0.0.5:41234" -> "10.0.0.5": the client's default name must not change with each connection.
std::string peer_host(const std::string& remote) {
  auto colon = remote.rfind(':');
  return colon == std::string::npos ? remote : remote.substr(0, colon);
}

bool valid_client_name(const std::string& name) {
  return !name.empty() && name.size() <= kMaxClientName && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == ':' || c == '@' || c == '-';
  });
}

bool is_submission(const HttpRequest& r) { return r.path == "/v1/evaluations" && r.method == "POST"; }

// This thread's connection of kind T, opened again when the location changes (a process may run
// several services, as the tests do).
template <class T>
T& thread_connection(const QueueConfig& config, std::unique_ptr<T> (*open)(const QueueConfig&)) {
  thread_local std::unique_ptr<T> c;
  thread_local std::string location;
  if (!c || location != config.location) {
    c.reset();
    c = open(config);
    location = config.location;
  }
  return *c;
}

}  // namespace

/// One line of the submission log: who (client, peer), what (definition, source hash), the task
/// and the outcome. Logged for every submission, accepted or refused.
struct ServiceApi::Submission {
  std::string outcome = "invalid";  ///< accepted, existing, over_quota, queue_full, unauthorized, invalid
  std::string client, peer, task, definition, source_sha256, reason;

  void log(int status) const {
    ordered_json j = {{"outcome", outcome}, {"status", status}, {"client", client}, {"peer", peer}};
    if (!task.empty()) j["task"] = task;
    if (!definition.empty()) j["definition"] = definition;
    if (!source_sha256.empty()) j["source_sha256"] = source_sha256;
    if (!reason.empty()) j["reason"] = reason;
    bool ok = outcome == "accepted" || outcome == "existing";
    spdlog::log(ok ? spdlog::level::info : spdlog::level::warn, "submission {}", json_text(j));
  }
};

ordered_json task_json(const TaskRecord& t) {
  ordered_json j = {{"id", t.id},
                    {"state", to_string(t.state)},
                    {"lane", to_string(t.lane)},
                    {"definition", t.request.value("definition", "")},
                    {"attempts", t.attempts},
                    {"created_at", t.created_at}};
  if (!t.client.empty()) j["client"] = t.client;
  if (!t.note.empty()) j["note"] = t.note;
  if (t.state != TaskState::queued) {
    j["worker"] = t.worker;
    j["started_at"] = t.started_at;  // the last claim: started_at - created_at is the time queued
  }
  if (t.state == TaskState::done) {
    j["status"] = t.status ? to_string(*t.status) : "";
    j["finished_at"] = t.finished_at;
    j["verdict"] = t.verdict ? t.verdict->to_json() : ordered_json(nullptr);
  }
  return j;
}

ServiceApi::ServiceApi(const Catalog& catalog, QueueConfig queue, ServiceApiOptions options,
                       std::function<ordered_json()> gpu_status)
    : m_catalog(catalog), m_queue(std::move(queue)), m_options(std::move(options)), m_gpu_status(std::move(gpu_status)) {}

TaskQueue& ServiceApi::queue() { return thread_connection(m_queue, &open_task_queue); }

HostRegistry& ServiceApi::registry() { return thread_connection(m_queue, &open_host_registry); }

HttpResponse ServiceApi::handle(const HttpRequest& r) {
  try {
    return route(r);
  } catch (const RedisConnectionError& e) {
    // Redis restarting or out of reach: nothing was accepted unless the client's key says so on
    // its retry (a submission whose answer was lost is found by its Idempotency-Key).
    spdlog::warn("{} {} from {}: the queue is unavailable: {}", r.method, r.path, r.remote, e.what());
    return retry_later(503, std::string("the queue is unavailable (") + e.what() +
                                "); retry later, with the same Idempotency-Key for a submission");
  }
}

HttpResponse ServiceApi::route(const HttpRequest& r) {
  // Before routing: without the token, not even which endpoints exist is told.
  if (m_options.token) {
    TokenCheck check = check_bearer(header(r, "authorization"), *m_options.token);
    if (check != TokenCheck::ok) {
      HttpResponse denied = error(401, check == TokenCheck::missing
                                           ? "this service needs an access token: send \"Authorization: Bearer <token>\" "
                                             "(ptxbench clients: --token-file FILE or $PTXBENCH_TOKEN)"
                                           : "wrong access token");
      denied.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"ptxbench\"");
      if (is_submission(r)) {
        Submission s;
        s.outcome = "unauthorized";
        s.peer = r.remote;
        s.client = peer_host(r.remote);  // a name sent without the token is not worth logging
        s.reason = check == TokenCheck::missing ? "no token" : "wrong token";
        s.log(401);
      } else {
        spdlog::debug("401 for {} {} from {}", r.method, r.path, r.remote);
      }
      return denied;
    }
  }
  const std::string prefix = "/v1/evaluations/";
  if (r.path == "/v1/evaluations") {
    if (r.method != "POST") return error(405, "use POST to submit an evaluation");
    return submit(r);
  }
  if (r.path.rfind(prefix, 0) == 0) {
    if (r.method != "GET") return error(405, "use GET to read an evaluation");
    return get(r.path.substr(prefix.size()), r);
  }
  if (r.method != "GET") return error(405, "use GET on " + r.path);
  if (r.path == "/v1/definitions") return definitions();
  if (r.path == "/v1/health") return health();
  if (r.path == "/metrics") return metrics();
  return error(404, "no such endpoint: " + r.path);
}

HttpResponse ServiceApi::submit(const HttpRequest& r) {
  Submission s;
  s.peer = r.remote;
  HttpResponse response = admit(r, s);
  if (response.status >= 400 && s.reason.empty()) {
    try {
      s.reason = ordered_json::parse(response.body).value("error", "");
    } catch (const std::exception&) {
    }
  }
  s.log(response.status);
  return response;
}

HttpResponse ServiceApi::admit(const HttpRequest& r, Submission& s) {
  std::string named = header(r, lower(kClientHeader));
  s.client = named.empty() ? peer_host(r.remote) : named;
  if (!named.empty() && !valid_client_name(named)) {
    s.client = peer_host(r.remote);
    return error(400, std::string(kClientHeader) + " must be 1 to " + std::to_string(kMaxClientName) +
                          " characters of [A-Za-z0-9._:@-]");
  }
  auto type = r.headers.find("content-type");
  if (type != r.headers.end() && type->second.find("json") == std::string::npos)
    return error(415, "send the request as application/json");
  EvalRequest req;
  try {
    req = parse_eval_request(r.body, m_catalog, m_options.limits);
  } catch (const PayloadTooLarge& e) {
    return error(413, e.what());
  } catch (const InputError& e) {
    return error(400, e.what());
  }
  s.definition = req.definition;
  s.source_sha256 = sha256_hex(req.source);
  std::string key;
  if (auto k = r.headers.find("idempotency-key"); k != r.headers.end()) {
    key = k->second;
    bool ok = !key.empty() && key.size() <= 128 && std::all_of(key.begin(), key.end(), [](unsigned char ch) {
      return std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == ':';
    });
    if (!ok) return error(400, "Idempotency-Key must be 1 to 128 characters of [A-Za-z0-9._:-]");
  }
  Enqueued e;
  try {
    e = queue().enqueue_once(req.to_json(), key, Submitter{s.client, s.peer}, m_options.admission, m_options.entry_lane);
  } catch (const InputError& err) {
    return error(409, err.what());
  }
  s.outcome = to_string(e.admission);
  s.task = e.id;
  if (e.admission == Admission::over_quota)
    return retry_later(429, "client '" + s.client + "' has " + std::to_string(e.in_use) +
                                " evaluations queued or running, its quota is " + std::to_string(m_options.admission.client_quota) +
                                "; retry when one has finished");
  if (e.admission == Admission::queue_full)
    return retry_later(503, "the queue is full (" + std::to_string(e.in_use) + " evaluations waiting, the bound is " +
                                std::to_string(m_options.admission.max_queued) + "); retry later");
  // 202: accepted now; 200: this key's task was accepted before (the answer to a resent request).
  std::string state = "queued";
  if (!e.created())
    if (auto t = queue().get(e.id)) state = to_string(t->state);
  return HttpResponse::json(e.created() ? 202 : 200,
                            ordered_json{{"id", e.id}, {"state", state}, {"links", {{"self", "/v1/evaluations/" + e.id}}}}.dump());
}

HttpResponse ServiceApi::get(const std::string& id, const HttpRequest& r) {
  if (id.empty() || id.size() > 64 || !std::all_of(id.begin(), id.end(), ::isxdigit)) return error(400, "malformed evaluation id");
  double wait = 0;
  if (auto w = r.query.find("wait"); w != r.query.end()) {
    try {
      std::size_t used = 0;
      wait = std::stod(w->second, &used);
      if (used != w->second.size() || wait < 0) throw std::invalid_argument("wait");
    } catch (const std::exception&) {
      return error(400, "wait must be a number of seconds");
    }
    wait = std::min(wait, kMaxWaitS);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait);
  for (;;) {
    auto t = queue().get(id);
    if (!t) return error(404, "no evaluation " + id + " (unknown, or expired by the retention policy)");
    if (t->state == TaskState::done || m_stopping || std::chrono::steady_clock::now() >= deadline)
      return HttpResponse::json(200, task_json(*t).dump());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

HttpResponse ServiceApi::definitions() const {
  ordered_json out = ordered_json::array();
  for (const auto& d : m_catalog.definitions()) {
    ordered_json loads = ordered_json::array();
    for (const auto& w : m_catalog.workloads(d.name)) loads.push_back({{"uuid", w.uuid}, {"label", w.label(d)}, {"default", w.is_default()}});
    out.push_back({{"name", d.name}, {"op_type", d.op_type}, {"definition", ordered_json::parse(d.json_text)}, {"workloads", loads}});
  }
  return HttpResponse::json(200, out.dump());
}

HttpResponse ServiceApi::health() {
  ordered_json gpus = ordered_json::array(), check_workers = ordered_json::array();
  for (auto& w : m_gpu_status ? m_gpu_status() : ordered_json::array())
    (w.value("lane", "gpu") == "check" ? check_workers : gpus).push_back(std::move(w));
  auto checks = registry().health_records();
  for (auto& g : gpus)
    if (auto it = checks.find(g.value("device", -1)); it != checks.end()) g["last_check"] = it->second.to_json();
  bool any_up = false;
  for (const auto& g : gpus) any_up = any_up || g.value("state", "") == "running";
  // Every host's workers as the host registry last heard of them (one host with SQLite).
  ordered_json workers = ordered_json::array();
  double t = TaskQueue::now();
  for (const auto& w : registry().worker_records()) {
    workers.push_back({{"host", w.host},
                       {"worker", w.worker},
                       {"device", w.device},
                       {"state", w.state},
                       {"last_heartbeat", w.last_heartbeat},
                       {"age_s", std::max(0.0, t - w.last_heartbeat)}});
    // A service without GPUs of its own (a front for other hosts) is up while a worker is.
    if (m_queue.redis() && w.state == "healthy") any_up = true;
  }
  ordered_json out = {{"status", any_up ? "ok" : "degraded"}, {"gpus", gpus}, {"workers", workers}, {"queue", queue().state_counts()}};
  if (!check_workers.empty()) out["check_workers"] = check_workers;
  return HttpResponse::json(any_up ? 200 : 503, out.dump());
}

HttpResponse ServiceApi::metrics() {
  HttpResponse r = HttpResponse::text(200, render_metrics(queue(), m_gpu_status ? m_gpu_status() : ordered_json::array()));
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return r;
}

}  // namespace ptxbench

#include "service/service_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>

#include "common/error.h"

namespace ptxbench {
namespace {

constexpr double kMaxWaitS = 60.0;

HttpResponse error(int status, const std::string& message) {
  return HttpResponse::json(status, ordered_json{{"error", message}}.dump());
}

}  // namespace

ordered_json task_json(const TaskRecord& t) {
  ordered_json j = {{"id", t.id},
                    {"state", to_string(t.state)},
                    {"definition", t.request.value("definition", "")},
                    {"attempts", t.attempts},
                    {"created_at", t.created_at}};
  if (!t.note.empty()) j["note"] = t.note;
  if (t.state != TaskState::queued) {
    j["worker"] = t.worker;
    j["started_at"] = t.started_at;  // the last claim: started_at - created_at is the time queued
  }
  if (t.state == TaskState::done) {
    j["status"] = t.status;
    j["finished_at"] = t.finished_at;
    j["verdict"] = t.verdict ? *t.verdict : ordered_json(nullptr);
  }
  return j;
}

ServiceApi::ServiceApi(const Catalog& catalog, std::string db, EvalRequestLimits limits,
                       std::function<ordered_json()> gpu_status)
    : m_catalog(catalog), m_db(std::move(db)), m_limits(limits), m_gpu_status(std::move(gpu_status)) {}

TaskQueue& ServiceApi::queue() {
  thread_local std::unique_ptr<TaskQueue> q;
  thread_local std::string for_db;
  if (!q || for_db != m_db) {
    q = std::make_unique<TaskQueue>(m_db);
    for_db = m_db;
  }
  return *q;
}

HttpResponse ServiceApi::handle(const HttpRequest& r) {
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
  auto type = r.headers.find("content-type");
  if (type != r.headers.end() && type->second.find("json") == std::string::npos)
    return error(415, "send the request as application/json");
  EvalRequest req;
  try {
    req = parse_eval_request(r.body, m_catalog, m_limits);
  } catch (const PayloadTooLarge& e) {
    return error(413, e.what());
  } catch (const InputError& e) {
    return error(400, e.what());
  }
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
    e = queue().enqueue_once(req.to_json(), key);
  } catch (const InputError& err) {
    return error(409, err.what());
  }
  // 202: accepted now; 200: this key's task was accepted before (the answer to a resent request).
  std::string state = "queued";
  if (!e.created)
    if (auto t = queue().get(e.id)) state = to_string(t->state);
  return HttpResponse::json(e.created ? 202 : 200,
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
  ordered_json gpus = m_gpu_status ? m_gpu_status() : ordered_json::array();
  auto checks = queue().health_records();
  for (auto& g : gpus)
    if (auto it = checks.find(g.value("device", -1)); it != checks.end()) g["last_check"] = it->second;
  bool any_up = false;
  for (const auto& g : gpus) any_up = any_up || g.value("state", "") == "running";
  ordered_json out = {{"status", any_up ? "ok" : "degraded"}, {"gpus", gpus}, {"queue", queue().state_counts()}};
  return HttpResponse::json(any_up ? 200 : 503, out.dump());
}

HttpResponse ServiceApi::metrics() {
  std::string m;
  m += "# HELP ptxbench_queue_tasks Tasks in the durable queue by state.\n# TYPE ptxbench_queue_tasks gauge\n";
  for (const auto& [state, n] : queue().state_counts()) m += fmt::format("ptxbench_queue_tasks{{state=\"{}\"}} {}\n", state, n);
  m += "# HELP ptxbench_finished_tasks Finished tasks retained, by verdict status.\n# TYPE ptxbench_finished_tasks gauge\n";
  for (const auto& [status, n] : queue().status_counts()) m += fmt::format("ptxbench_finished_tasks{{status=\"{}\"}} {}\n", status, n);
  auto durations = queue().recent_durations(10000);
  std::vector<double> all;
  double sum = 0;
  for (const auto& [status, s] : durations) {
    all.push_back(s);
    sum += s;
  }
  std::sort(all.begin(), all.end());
  m += "# HELP ptxbench_evaluation_seconds Wall time of recent finished evaluations.\n# TYPE ptxbench_evaluation_seconds summary\n";
  for (double q : {0.5, 0.95, 0.99})
    if (!all.empty())
      m += fmt::format("ptxbench_evaluation_seconds{{quantile=\"{}\"}} {:.6f}\n", q, all[std::min(all.size() - 1, static_cast<std::size_t>(q * all.size()))]);
  m += fmt::format("ptxbench_evaluation_seconds_sum {:.6f}\nptxbench_evaluation_seconds_count {}\n", sum, all.size());
  ordered_json gpus = m_gpu_status ? m_gpu_status() : ordered_json::array();
  // One series per worker: a GPU has several when --workers-per-gpu > 1 (same labels twice would
  // be one series reported twice, which Prometheus rejects).
  auto labels = [](const ordered_json& g) {
    return fmt::format("device=\"{}\",worker=\"{}\"", g.value("device", 0), g.value("worker", ""));
  };
  m += "# HELP ptxbench_worker_up Whether the worker is running.\n# TYPE ptxbench_worker_up gauge\n";
  for (const auto& g : gpus) m += fmt::format("ptxbench_worker_up{{{}}} {}\n", labels(g), g.value("state", "") == "running" ? 1 : 0);
  m += "# HELP ptxbench_worker_restarts_total Worker restarts since the service started.\n# TYPE ptxbench_worker_restarts_total counter\n";
  for (const auto& g : gpus) m += fmt::format("ptxbench_worker_restarts_total{{{}}} {}\n", labels(g), g.value("restarts", 0));
  HttpResponse r = HttpResponse::text(200, m);
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  return r;
}

}  // namespace ptxbench

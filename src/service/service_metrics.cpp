// The Prometheus exposition of the service (see service_metrics.h).
#include "service/service_metrics.h"

#include <fmt/format.h>

#include <initializer_list>
#include <map>

#ifndef PTXBENCH_COMMIT
#define PTXBENCH_COMMIT "unknown"
#endif

namespace ptxbench {
namespace {

// Label values may hold anything a verdict said; the text format escapes \, " and newlines.
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void family(std::string& m, const char* name, const char* type, const char* help) {
  m += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

/// One series per label value; `always` are written even when never counted (a 0 series, so a
/// rate() over them works from the start).
void labelled(std::string& m, const char* name, const char* label, std::map<std::string, int64_t> values,
              std::initializer_list<const char*> always = {}) {
  for (const char* a : always) values.emplace(a, 0);
  for (const auto& [value, n] : values) m += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, label_value(value), n);
}

}  // namespace

std::string build_version() { return PTXBENCH_VERSION; }
std::string build_commit() { return PTXBENCH_COMMIT; }

std::string render_metrics(TaskQueue& queue, const ordered_json& workers) {
  std::string m;
  family(m, "ptxbench_build_info", "gauge", "The running ptxbench build (always 1).");
  m += fmt::format("ptxbench_build_info{{version=\"{}\",commit=\"{}\"}} 1\n", label_value(build_version()),
                   label_value(build_commit()));

  family(m, "ptxbench_queue_tasks", "gauge", "Tasks in the durable queue by state (done: those not yet expired).");
  labelled(m, "ptxbench_queue_tasks", "state", queue.state_counts());

  QueueCounters c = queue.counters();
  family(m, "ptxbench_evaluations_total", "counter",
         "Finished evaluations by verdict status (kept in the queue database: survives restarts and retention).");
  labelled(m, "ptxbench_evaluations_total", "status", c.evaluations);

  family(m, "ptxbench_evaluation_seconds", "histogram", "Wall time of finished evaluations, claim to verdict of the last attempt.");
  int64_t cumulative = 0;
  for (std::size_t i = 0; i < c.seconds_buckets.size(); ++i) {
    cumulative += c.seconds_buckets[i];
    std::string le = i < kEvaluationSecondsBuckets.size() ? fmt::format("{}", kEvaluationSecondsBuckets[i]) : "+Inf";
    m += fmt::format("ptxbench_evaluation_seconds_bucket{{le=\"{}\"}} {}\n", le, cumulative);
  }
  m += fmt::format("ptxbench_evaluation_seconds_sum {:.6f}\nptxbench_evaluation_seconds_count {}\n", c.seconds_sum, cumulative);

  family(m, "ptxbench_requeues_total", "counter", "Tasks taken back to the queue, by cause.");
  labelled(m, "ptxbench_requeues_total", "cause", c.requeues, {"infra_error", "lease_expired", "service_restart", "worker_lost"});
  family(m, "ptxbench_submissions_total", "counter",
         "Submissions by admission: accepted, existing (an idempotent resend), over_quota (429), queue_full (503).");
  labelled(m, "ptxbench_submissions_total", "outcome", c.submissions, {"accepted", "existing", "over_quota", "queue_full"});

  // One series per worker: a GPU has several when --workers-per-gpu > 1 (same labels twice would
  // be one series reported twice, which Prometheus rejects).
  auto labels = [](const ordered_json& g) {
    return fmt::format("device=\"{}\",worker=\"{}\"", g.value("device", 0), label_value(g.value("worker", "")));
  };
  family(m, "ptxbench_worker_up", "gauge", "Whether the worker is running.");
  for (const auto& g : workers) m += fmt::format("ptxbench_worker_up{{{}}} {}\n", labels(g), g.value("state", "") == "running" ? 1 : 0);
  family(m, "ptxbench_worker_restarts_total", "counter", "Worker restarts since the service process started.");
  for (const auto& g : workers) m += fmt::format("ptxbench_worker_restarts_total{{{}}} {}\n", labels(g), g.value("restarts", 0));
  return m;
}

}  // namespace ptxbench

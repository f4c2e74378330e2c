#include "suite/suite_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "common/clock.h"
#include "common/error.h"
#include "common/stats.h"
#include "service/service_client.h"

namespace ptxbench {
namespace {

// Retries `f` while the service cannot be reached (connection refused during a restart, a 5xx),
// for up to `outage_s`; a 4xx (InputError) is the request's fault and is not retried.
template <typename F>
auto with_outage_retry(double outage_s, int& tries, F&& f) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(outage_s);
  double pause = 0.25;
  for (;;) {
    ++tries;
    try {
      return f();
    } catch (const InputError&) {
      throw;
    } catch (const Error&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));
      pause = std::min(2.0, pause * 2);
    }
  }
}

ordered_json latency_stats(const std::vector<double>& v) {
  if (v.empty()) return {{"count", 0}};
  return {{"count", v.size()}, {"p50_s", quantile(v, 0.5)}, {"p95_s", quantile(v, 0.95)}, {"max_s", max_of(v)}};
}

}  // namespace

ordered_json LoadRecord::to_json() const {
  return {{"index", index},         {"case", case_name},          {"definition", definition}, {"id", id},
          {"expected", expected},   {"status", status},           {"mismatches", mismatches}, {"lost", lost},
          {"submit_tries", submit_tries}, {"attempts", attempts}, {"worker", worker}, {"latency_s", latency_s()}, {"service_s", service_s}, {"queued_s", queued_s},
          {"eval_s", eval_s},       {"speedup", speedup},        {"stage_s", stage_s},       {"retried_alone", retried_alone},
          {"submitted_at", submitted_at}, {"done_at", done_at}};
}

std::vector<int> load_schedule(std::size_t cases, int count, uint64_t seed) {
  PTXB_ENSURE(cases > 0, "load", "no cases to submit");
  std::vector<int> order(cases), out;
  std::mt19937_64 rng(seed);
  while (static_cast<int>(out.size()) < count) {
    for (std::size_t i = 0; i < cases; ++i) order[i] = static_cast<int>(i);
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order)
      if (static_cast<int>(out.size()) < count) out.push_back(i);
  }
  return out;
}

LoadReport run_load(const std::vector<LoadCase>& cases, const LoadOptions& o,
                    const std::function<void(const LoadRecord&, int done)>& progress) {
  if (o.count <= 0 || o.clients <= 0) throw InputError("load", "count and clients must be positive");
  std::vector<int> schedule = load_schedule(cases.size(), o.count, o.shuffle_seed);
  std::string prefix = o.key_prefix.empty() ? "load-" + std::to_string(static_cast<long long>(epoch_seconds() * 1000)) : o.key_prefix;
  LoadReport report;
  report.records.resize(static_cast<std::size_t>(o.count));
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::mutex progress_mutex;
  std::string first_error;
  bool input_error = false;        // the first failure was the request's or the user's (401): exit code 2
  bool environment_error = false;  // ... the service's (unreachable past the outage allowance): exit code 3
  int done = 0;
  auto start = std::chrono::steady_clock::now();

  auto client = [&] {
    ServiceClient service(o.service, o.client);
    for (int i = next++; i < o.count && !failed; i = next++) {
      const LoadCase& lc = cases[static_cast<std::size_t>(schedule[static_cast<std::size_t>(i)])];
      LoadRecord& r = report.records[static_cast<std::size_t>(i)];
      r.index = i;
      r.case_name = lc.c.name;
      r.definition = lc.definition;
      r.expected = to_string(lc.c.expect.status);
      EvalRequest request;
      request.definition = lc.definition;
      request.workload = o.workload;
      request.source = lc.c.source;
      request.language = lc.c.language;
      try {
        if (!o.options.empty()) request.set_options(o.options, "load options");
        r.submitted_at = epoch_seconds();
        r.id = with_outage_retry(o.outage_s, r.submit_tries,
                                 [&] { return service.submit(request, prefix + "-" + std::to_string(i)); });
        auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.timeout_s);
        ordered_json task;
        int polls = 0;
        for (;;) {
          double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
          if (left <= 0) {
            r.lost = true;
            break;
          }
          task = with_outage_retry(o.outage_s, polls, [&] { return service.get(r.id, std::min(left, 30.0)); });
          if (task.value("state", "") == "done") break;
        }
        r.done_at = epoch_seconds();
        if (!r.lost) {
          r.status = task.value("status", "");
          r.attempts = static_cast<int>(task.value("attempts", 0));
          r.worker = task.value("worker", "");
          r.service_s = task.value("finished_at", 0.0) - task.value("created_at", 0.0);
          r.queued_s = task.value("started_at", 0.0) - task.value("created_at", 0.0);
          const FinishedEvaluation finished = read_finished_task(task);
          const std::optional<Verdict>& v = finished.verdict;
          if (!v) r.mismatches.push_back(finished.problem);
          if (v) {
            r.eval_s = v->wall_seconds;
            r.speedup = v->speedup.value_or(0.0);
            for (const auto& st : stage_timings(v->stages)) {
              if (st.wall_s) r.stage_s[st.stage] = *st.wall_s;
              if (st.gpu_lock_wait_s) r.stage_s[st.stage + "_lock_wait"] = *st.gpu_lock_wait_s;
              if (st.retried_alone) r.retried_alone.push_back(st.stage);
            }
            r.mismatches = expectation_mismatches(lc.c.expect, *v);
          }
        } else {
          r.mismatches.push_back("no verdict within " + std::to_string(static_cast<int>(o.timeout_s)) + " s");
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        if (first_error.empty()) {
          first_error = std::string(e.what()) + " (submission " + std::to_string(i) + ", " + lc.c.name + ")";
          input_error = dynamic_cast<const InputError*>(&e) != nullptr;
          environment_error = dynamic_cast<const EnvironmentError*>(&e) != nullptr;
        }
        failed = true;
        return;
      }
      std::lock_guard<std::mutex> lock(progress_mutex);
      ++done;
      if (progress) progress(r, done);
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < std::min(o.clients, o.count); ++k) threads.emplace_back(client);
  for (auto& t : threads) t.join();
  report.wall_s = seconds_since(start);
  if (failed && input_error) throw InputError("load", first_error);
  if (failed && environment_error) throw EnvironmentError("load", first_error);
  if (failed) throw Error("load", first_error);
  return report;
}

bool LoadReport::all_as_expected() const {
  return std::all_of(records.begin(), records.end(), [](const LoadRecord& r) { return !r.lost && r.mismatches.empty(); });
}

std::map<std::string, std::vector<double>> LoadReport::speedups_by_case() const {
  std::map<std::string, std::vector<double>> speedups;
  for (const auto& r : records)
    if (!r.lost && r.speedup > 0) speedups[r.case_name].push_back(r.speedup);
  return speedups;
}

std::vector<std::string> LoadReport::unstable_speedups(double max_spread) const {
  std::vector<std::string> unstable;
  for (const auto& [name, v] : speedups_by_case())
    if (relative_spread(v) > max_spread) unstable.push_back(name);
  return unstable;
}

ordered_json LoadReport::summary() const {
  std::map<std::string, std::vector<double>> latency, eval, queued;
  std::map<std::string, std::map<std::string, std::vector<double>>> stages;  // case -> stage -> seconds
  std::vector<double> all, done_times;
  std::set<std::string> ids;
  int lost = 0, wrong = 0, rerun = 0, resent = 0;
  std::map<std::string, int> by_worker, reruns_by_worker;
  std::map<std::string, std::map<std::string, int>> retried_alone;  // case -> final status -> count
  ordered_json wrong_list = ordered_json::array();
  for (const auto& r : records) {
    if (!r.id.empty()) ids.insert(r.id);
    if (r.lost) ++lost;
    if (r.attempts > 1) ++rerun;
    if (r.submit_tries > 1) ++resent;
    if (!r.mismatches.empty()) {
      ++wrong;
      if (wrong_list.size() < 20) wrong_list.push_back({{"index", r.index}, {"case", r.case_name}, {"problem", r.mismatches.front()}});
    }
    if (r.lost) continue;
    ++by_worker[r.worker];
    if (r.attempts > 1) ++reruns_by_worker[r.worker];
    if (!r.retried_alone.empty()) ++retried_alone[r.case_name][r.status];
    latency[r.status].push_back(r.latency_s());
    eval[r.status].push_back(r.eval_s);
    queued[r.status].push_back(r.queued_s);
    for (const auto& [name, s] : r.stage_s.items()) stages[r.case_name][name].push_back(s.get<double>());
    all.push_back(r.latency_s());
    done_times.push_back(r.done_at);
  }
  ordered_json per_status = ordered_json::object();
  for (const auto& [status, v] : latency) {
    per_status[status] = latency_stats(v);
    per_status[status]["eval_p50_s"] = quantile(eval[status], 0.5);
    per_status[status]["queued_p50_s"] = quantile(queued[status], 0.5);
  }
  ordered_json speed = ordered_json::object();
  for (const auto& [name, v] : speedups_by_case())
    speed[name] = {{"count", v.size()}, {"median", median(v)}, {"min", min_of(v)}, {"max", max_of(v)}, {"spread", relative_spread(v)}};
  ordered_json stage_medians = ordered_json::object();
  for (const auto& [name, per_stage] : stages)
    for (const auto& [stage, v] : per_stage) stage_medians[name][stage] = median(v);
  std::size_t finished = records.size() - static_cast<std::size_t>(lost);
  // Steady state: verdicts between the first and the last tenth (workers warming their caches at
  // the start, the queue draining at the end), comparable between runs of different lengths.
  std::sort(done_times.begin(), done_times.end());
  double steady = 0.0;
  if (done_times.size() >= 10) {
    std::size_t i0 = done_times.size() / 10, i1 = done_times.size() - 1 - done_times.size() / 10;
    if (done_times[i1] > done_times[i0]) steady = 60.0 * static_cast<double>(i1 - i0) / (done_times[i1] - done_times[i0]);
  }
  return {{"submissions", records.size()},
          {"finished", finished},
          {"as_expected", records.size() - static_cast<std::size_t>(wrong)},
          {"not_as_expected", wrong_list},
          {"lost", lost},
          {"distinct_task_ids", ids.size()},
          {"rerun_by_service", rerun},
          {"finished_by_worker", by_worker},
          {"reruns_finished_by_worker", reruns_by_worker},
          {"resent_by_client", resent},
          {"timeouts_retried_alone", retried_alone},
          {"wall_s", wall_s},
          {"evaluations_per_minute", wall_s > 0 ? 60.0 * static_cast<double>(finished) / wall_s : 0.0},
          {"steady_evaluations_per_minute", steady},
          {"latency", latency_stats(all)},
          {"by_status", per_status},
          {"speedup_by_case", speed},
          {"speedup_spread_limit", kMaxSpeedupSpread},
          {"unstable_speedups", unstable_speedups()},
          {"stage_median_s_by_case", stage_medians}};
}

}  // namespace ptxbench

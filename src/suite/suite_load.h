// Load on the evaluation service: candidate-suite cases submitted through the HTTP API by several
// concurrent clients, each verdict checked against the case's expectation. What the service issue
// asks to see: every verdict as expected, no task lost or duplicated, throughput and latency per
// status — also across a restart of the service (clients resend with idempotency keys and keep
// polling until it is back).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "service/service_client.h"
#include "suite/candidate_suite.h"

namespace ptxbench {

struct LoadCase {
  std::string definition;
  SuiteCase c;
};

struct LoadOptions {
  std::string service;                  ///< base URL
  ServiceClientOptions client;          ///< access token, client name
  int count = 200;                      ///< submissions
  int clients = 8;                      ///< concurrent client threads
  std::string workload;                 ///< empty: each definition's default
  ordered_json options = ordered_json::object();  ///< request options (seed, trials, ...)
  std::string key_prefix;               ///< idempotency keys are <prefix>-<index>
  uint64_t shuffle_seed = 1;            ///< order of the cases within each round
  double timeout_s = 3600;              ///< per submission, submit to verdict
  double outage_s = 300;                ///< how long a client keeps retrying an unreachable service
};

struct LoadRecord {
  int index = 0;
  std::string case_name, definition, id, expected, status;
  std::vector<std::string> mismatches;
  bool lost = false;         ///< no verdict within the timeout
  int submit_tries = 0;      ///< > 1: the service was unreachable for a while
  int attempts = 0;          ///< the service's claims of the task (> 1: re-run after a failure)
  std::string worker;        ///< the worker that finished it ("gpu1.2": GPU 1, worker 2)
  double submitted_at = 0;   ///< epoch seconds, first try
  double done_at = 0;        ///< epoch seconds, verdict seen
  double service_s = 0;      ///< the service's created → finished
  double queued_s = 0;       ///< the service's created → last claim by a worker
  double eval_s = 0;         ///< the verdict's wall_seconds
  double speedup = 0;        ///< PASSED verdicts: baseline / candidate time (0 otherwise)
  ordered_json stage_s = ordered_json::object();  ///< wall seconds of each evaluation stage that ran
  std::vector<std::string> retried_alone;  ///< stages that timed out on a shared GPU and ran again alone
  [[nodiscard]] double latency_s() const { return done_at - submitted_at; }
  [[nodiscard]] ordered_json to_json() const;
};

struct LoadReport {
  std::vector<LoadRecord> records;
  double wall_s = 0;
  /// Totals, throughput, p50/p95 latency per status, mismatches, lost and duplicated tasks, and the
  /// spread of each PASSED case's speedup (timing stays stable while other work shares the GPU).
  [[nodiscard]] ordered_json summary() const;
  [[nodiscard]] bool all_as_expected() const;
  /// Cases whose PASSED speedups spread ((max - min) / median) over `max_spread`: timings that
  /// the load, or something else on the GPU, disturbed.
  [[nodiscard]] std::vector<std::string> unstable_speedups(double max_spread = kMaxSpeedupSpread) const;
  static constexpr double kMaxSpeedupSpread = 0.10;

 private:
  /// PASSED speedups of each case, in record order.
  [[nodiscard]] std::map<std::string, std::vector<double>> speedups_by_case() const;
};

/// The i-th submission's case: rounds over all cases, each round in a seeded shuffled order.
std::vector<int> load_schedule(std::size_t cases, int count, uint64_t seed);

/// Runs the load; `progress` (may be empty) is called after each verdict, from client threads,
/// serialised. Throws InputError when the service rejects a request (a bad suite or option, a
/// missing or wrong access token).
LoadReport run_load(const std::vector<LoadCase>& cases, const LoadOptions& options,
                    const std::function<void(const LoadRecord&, int done)>& progress = {});

}  // namespace ptxbench

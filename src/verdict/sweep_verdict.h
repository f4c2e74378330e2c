// A candidate evaluated over a sweep of its definition's workloads (`eval --workloads`, a run's
// "workloads"): one verdict per workload and what the sweep states about all of them together —
// PASSED only when PASSED at every workload, the geometric mean and the worst of the speedups, the
// target-instruction claims of every workload (docs/verdict.md, "Workload sweeps"). The human
// table, the model's feedback and the one Verdict a run's turn stores are rendered from it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "definitions/workload.h"
#include "verdict/verdict.h"

namespace ptxbench {

inline constexpr const char* kSweepSchema = "ptxbench.sweep";
inline constexpr int kSweepSchemaVersion = 1;
/// The key under which a sweep's aggregate Verdict (a run's turn) carries the sweep document:
/// a top-level key the Verdict keeps in `extra`, which readers of plain verdicts ignore.
inline constexpr const char* kSweepVerdictKey = "workload_sweep";

/// One workload of a sweep and its verdict.
struct SweepEntry {
  std::string workload_uuid;
  std::string workload_label;           ///< "M=8192"
  std::map<std::string, int64_t> axes;  ///< the workload's variable axes
  /// Unset: not evaluated (the sweep stopped at an earlier failure, SweepOptions::stop_at_failure).
  std::optional<Verdict> verdict;
};

/// The entry of workload `w` of `def`, with its verdict.
SweepEntry sweep_entry(const Definition& def, const Workload& w, std::optional<Verdict> verdict);

/// The entries and their aggregate. The aggregate fields are derived: aggregate_sweep computes them
/// from the entries, and from_json recomputes them (the stored ones are for readers without this code).
struct SweepVerdict {
  std::string definition;
  std::vector<SweepEntry> entries;  ///< in sweep order

  /// PASSED when every workload is; INFRA_ERROR when any workload is (ours: the sweep is not
  /// complete, so it is re-run, never counted against a model); otherwise the status of the first
  /// workload, in sweep order, that did not pass.
  Status status = Status::INFRA_ERROR;
  std::string message;                   ///< names the deciding workload
  std::optional<std::size_t> deciding;   ///< the entry that gave a status other than PASSED
  std::size_t passed = 0;                ///< workloads PASSED
  std::size_t evaluated = 0;             ///< workloads with a verdict
  /// Over every workload, set only when all PASSED and each has a speedup (timing on): a speedup
  /// of a kernel that is wrong somewhere is no claim, so a failed sweep has none.
  std::optional<double> geomean_speedup, worst_speedup;
  std::optional<std::size_t> worst;      ///< the entry of the worst speedup
  /// The conjunction over the workloads: PASSED and the target instructions executed at each.
  bool target_instruction_correct = false;
  bool target_instruction_strict = false;
  /// The lowest tensor-core coverage over the workloads, when every workload has one.
  std::optional<double> tensor_core_coverage;

  [[nodiscard]] bool all_correct() const noexcept { return status == Status::PASSED; }
  /// The entry whose verdict speaks for the sweep: the deciding one, else the worst speedup, else the first.
  [[nodiscard]] const SweepEntry* representative() const;

  [[nodiscard]] ordered_json to_json() const;
  /// Reads a sweep document (the entries; the aggregate is recomputed); InputError naming the
  /// field for a wrong schema, type or verdict.
  static SweepVerdict from_json(const ordered_json& j);

  /// The sweep as one Verdict, for a run's turn (run store, report): the aggregate status,
  /// message and target-instruction claims, speedup = the geometric mean, no single times; the
  /// stages, environment and seed of the representative workload (so that reports read the GPU,
  /// the options and a TIMEOUT's stage); the sweep document under kSweepVerdictKey.
  [[nodiscard]] Verdict aggregate_verdict() const;
};

/// The aggregate of `entries` (see SweepVerdict's fields).
SweepVerdict aggregate_sweep(std::string definition, std::vector<SweepEntry> entries);

struct SweepOptions {
  /// Default off: every workload is evaluated whatever the others gave, so the table shows where
  /// a kernel fails and where it holds. On: the workloads after the first failure are left
  /// unevaluated (an INFRA_ERROR does not stop the sweep: it is not the kernel's).
  bool stop_at_failure = false;
  /// Called after each workload's verdict, in order (a table row as it comes); may be empty.
  std::function<void(const SweepEntry&)> on_entry;
};

/// Evaluates `workloads` of `def` in order with `evaluate` under the stop rule of `options`.
SweepVerdict run_sweep(const Definition& def, const std::vector<const Workload*>& workloads,
                       const std::function<Verdict(const Workload&)>& evaluate, const SweepOptions& options = {});

/// The human table, one row per workload: workload, status, time_us, base_us, speedup, target.
std::string sweep_table_header();
std::string sweep_table_row(const SweepEntry& e);
std::string sweep_table(const SweepVerdict& s);
/// The aggregate in one line: all correct, geomean and worst speedup, target instructions.
std::string sweep_summary(const SweepVerdict& s);

/// The feedback a model gets for a sweep: the aggregate, the table, then render_feedback of the
/// representative workload (the first failure, else the slowest one), its details cut so that the
/// whole stays near `max_chars`.
std::string render_sweep_feedback(const SweepVerdict& s, std::size_t max_chars = 8000);

/// The sweep a verdict carries under kSweepVerdictKey (a sweep's aggregate_verdict), or nullopt.
std::optional<SweepVerdict> sweep_of(const Verdict& v);
/// The feedback of a stored turn verdict: render_sweep_feedback for a sweep's aggregate,
/// render_feedback for any other.
std::string render_turn_feedback(const Verdict& v);

}  // namespace ptxbench

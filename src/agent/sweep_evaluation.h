// A run whose config names "workloads" evaluates each turn's candidate over that sweep: one service
// task per workload, answered to the turn loop as one task whose verdict is the sweep's aggregate
// (SweepVerdict::aggregate_verdict, the per-workload verdicts under "workload_sweep"). The turn loop,
// the run store and the reports keep handling one task and one Verdict per turn (docs/agent.md,
// "Workload sweeps").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/evaluation_client.h"
#include "definitions/catalog.h"
#include "definitions/workload_selection.h"

namespace ptxbench {

/// The sweep's task id as the run store keeps it: "sweep:<definition>:<id>,<id>,..." (one service
/// task per workload, in sweep order).
inline constexpr const char* kSweepTaskPrefix = "sweep:";

/// Over `inner` (which, like `catalog`, must outlive it). submit() sends the request once per
/// workload that `selection` names for the request's definition, each with its own "workload" and
/// the idempotency key `key:w<index>` (a resumed turn gets the same tasks back), and returns the
/// sweep's task id; wait_done() waits for every task (within one timeout) and answers the
/// aggregate verdict; forgot() is true when
/// the service forgot any of them (the loop then submits the sweep again). A per-workload answer
/// without a readable verdict counts as that workload's INFRA_ERROR.
std::unique_ptr<EvaluationClient> make_sweep_evaluation(EvaluationClient& inner, const Catalog& catalog,
                                                        WorkloadSelection selection);

/// What the task message says of a sweep (appended to the prompt's task): the workloads the kernel
/// runs at and the rule that judges it there.
std::string sweep_task_note(const Definition& def, const std::vector<const Workload*>& workloads);

}  // namespace ptxbench

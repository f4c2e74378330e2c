// The worker/runner protocol, typed on both sides: one JSON line per request and reply over the
// control socket (common/control_channel.h); shared buffers travel as file descriptors with the
// setup request. The runner is untrusted once it has loaded a candidate: the worker prepares every
// call itself (fresh inputs, poison, cold L2) and checks what the runner reports against its own
// clock and its own checks of the outputs (docs/verdict.md, "Measurement integrity").
//
//   runner → worker   ready                 the device is usable, activity recording runs
//   setup             map buffers, then either build the baseline (the trusted baseline runner),
//                     or strip the environment, install seccomp and load the candidate
//   call              one call of the candidate (or the baseline, or the runner's own trusted probe
//                     kernel), then a device-wide synchronize
//   spans             activity of every call since the last spans: span, launches; stray work
//   exit
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json_check.h"
#include "definitions/workload.h"
#include "timing/call_activity.h"

namespace ptxbench {

enum class RunnerOp { setup, call, spans, exit };
std::string to_string(RunnerOp op);
/// Throws InputError for an unknown op.
RunnerOp parse_runner_op(const std::string& s);

/// One tensor as the runner maps it: a shared allocation (by the index of its descriptor among
/// those sent with the request) plus the offset of element 0, or (no descriptor) its own buffer.
struct WireTensor {
  TensorSpec spec;
  int fd_index = -1;            ///< -1: the runner allocates it itself (standalone mode)
  std::size_t alloc_bytes = 0;  ///< size of the shared allocation
  std::size_t offset = 0;       ///< bytes from the allocation's base to element 0
};
ordered_json to_json(const TensorSpec& spec);
TensorSpec tensor_spec_from_json(const ordered_json& j);
std::vector<TensorSpec> tensor_specs_from_json(const ordered_json& list);
ordered_json to_json(const WireTensor& t);
WireTensor wire_tensor_from_json(const ordered_json& j);

/// What the trusted baseline runner builds instead of loading a library: the frontier baseline of
/// one workload (the definition's document, the workload's variable axes and its input samplers:
/// a GQA baseline plans for index arrays the workload marks "derived").
struct BaselineSetup {
  std::string definition;  ///< the definition's JSON document
  std::string workload;    ///< the workload's uuid (for messages)
  std::map<std::string, int64_t> axes;
  std::map<std::string, InputSampler> inputs;
};
/// The baseline runner's setup for `w`, and the workload the runner rebuilds from it (named after
/// `definition_name`): the same axes and samplers.
BaselineSetup baseline_setup(const ResolvedWorkload& w);
Workload baseline_workload(const BaselineSetup& b, const std::string& definition_name);

struct SetupRequest {
  std::string library;                    ///< the candidate library (empty with `baseline`)
  std::vector<WireTensor> tensors;        ///< inputs then outputs, ABI order
  std::optional<BaselineSetup> baseline;  ///< set: this runner runs the baseline, never a candidate
  /// A shared allocation (descriptor index, size) that the runner overwrites in its own context
  /// before every call, outside the call's window, and waits for. The worker has flushed L2
  /// already, from its process; this makes the call start as after an application's previous
  /// kernel, with dirty lines in L2. Both runners get the same allocation, so both sides start
  /// with the same lines. -1: none.
  int flush_fd_index = -1;
  std::size_t flush_bytes = 0;
  /// The library is the trusted Triton shim of a Triton candidate (docs/triton.md): the runner
  /// loads it and lets it start Python, torch and Triton before the filter is installed, and
  /// imports the candidate's file only after. On the wire: "language": "triton" (absent: CUDA).
  bool triton = false;
};

/// `candidate`: what setup loaded (the candidate library, or the baseline); `probe`: the runner's
/// own trusted spin kernel, `probe_us` long (usable before setup; diagnosis and the GPU tests).
enum class CallTarget { candidate, probe };
struct CallRequest {
  uint64_t index = 0;  ///< the worker's sequence number; spans come back keyed by it
  CallTarget target = CallTarget::candidate;
  double probe_us = 0.0;  ///< probe: how long the trusted kernel spins
};

struct RunnerRequest {
  RunnerOp op = RunnerOp::exit;
  /// Numbered by the worker; the reply echoes it. A line that something else wrote into the
  /// channel (a candidate forging a reply) puts every later reply out of step, which the worker sees.
  uint64_t seq = 0;
  std::optional<SetupRequest> setup;
  std::optional<CallRequest> call;
};
ordered_json to_json(const RunnerRequest& r);
/// A call of the candidate (or of the runner's trusted probe kernel, spinning `probe_us`).
RunnerRequest call_request(uint64_t index, CallTarget target = CallTarget::candidate, double probe_us = 0.0);
/// The runner's account of the calls since the last one (spans, launches, stray work).
RunnerRequest spans_request();

/// Throws InputError (malformed request).
RunnerRequest runner_request_from_json(const ordered_json& j);

enum class FailureKind {
  call,   ///< the candidate's call returned an error or the device reported one: its fault
  setup,  ///< loading or mapping failed
  infra,  ///< ours: no device, CUPTI failed
};

struct RunnerFailureInfo {
  FailureKind kind = FailureKind::infra;
  int code = 0;  ///< the candidate's return code or the cudaError_t
  std::string error;
};

struct SpansReport {
  std::vector<CallActivity> calls;
  std::vector<std::string> stray;  ///< device work outside every call
  uint64_t dropped_records = 0;
};

struct RunnerReply {
  uint64_t seq = 0;                          ///< the request's
  std::optional<RunnerFailureInfo> failure;  ///< absent: ok
  bool ready = false;                        ///< the first line
  /// System calls the sandbox denied so far (cumulative; reported by the runner, so a hostile
  /// candidate could hide them, but never make them succeed).
  std::vector<std::string> violations;
  std::optional<double> wall_us;  ///< call: host time of the call as the runner saw it
  std::optional<SpansReport> spans;
  std::string seccomp;            ///< setup: the filter profile installed ("" when none)
  std::string proc_view;          ///< setup: what the candidate sees of its own start-up and /proc (sandbox/process_traces.h)
  std::string baseline;           ///< setup of a baseline: its name ("cuBLASLt")
  [[nodiscard]] bool ok() const noexcept { return !failure.has_value(); }
};
ordered_json to_json(const RunnerReply& r);
/// Throws InputError (malformed reply).
RunnerReply runner_reply_from_json(const ordered_json& j);

}  // namespace ptxbench

#include "runner/protocol.h"

#include "common/enum_names.h"
#include "common/error.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "runner protocol";

constexpr EnumName<FailureKind> kFailureKinds[] = {
    {FailureKind::call, "call"}, {FailureKind::setup, "setup"}, {FailureKind::infra, "infra"}};

constexpr EnumName<RunnerOp> kOps[] = {
    {RunnerOp::setup, "setup"}, {RunnerOp::call, "call"}, {RunnerOp::spans, "spans"}, {RunnerOp::exit, "exit"}};

template <class F>
auto parsed(const char* what, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(kLib, std::string("malformed ") + what + ": " + e.what());
  }
}

}  // namespace

std::string to_string(RunnerOp op) { return enum_name(kOps, op); }

RunnerOp parse_runner_op(const std::string& s) { return parse_enum(kOps, s, "op", kLib); }

ordered_json to_json(const TensorSpec& s) {
  return {{"name", s.name}, {"dtype", dtype_name(s.dtype)}, {"shape", s.shape}, {"strides", s.strides},
          {"is_output", s.is_output}};
}

TensorSpec tensor_spec_from_json(const ordered_json& j) {
  return parsed("tensor spec", [&] {
    TensorSpec s;
    s.name = j.at("name").get<std::string>();
    auto dt = parse_dtype(j.at("dtype").get<std::string>());
    if (!dt) throw InputError(kLib, "bad dtype in tensor spec " + s.name);
    s.dtype = *dt;
    s.shape = j.at("shape").get<std::vector<int64_t>>();
    s.strides = j.at("strides").get<std::vector<int64_t>>();
    s.is_output = j.at("is_output").get<bool>();
    if (s.shape.size() != s.strides.size() || s.shape.size() > 8) throw InputError(kLib, "bad rank of tensor " + s.name);
    for (int64_t d : s.shape)
      if (d < 0) throw InputError(kLib, "negative extent in tensor " + s.name);
    return s;
  });
}

std::vector<TensorSpec> tensor_specs_from_json(const ordered_json& list) {
  std::vector<TensorSpec> out;
  for (const auto& j : list) out.push_back(tensor_spec_from_json(j));
  return out;
}

ordered_json to_json(const WireTensor& t) {
  ordered_json j = to_json(t.spec);
  if (t.fd_index >= 0) {
    j["fd_index"] = t.fd_index;
    j["alloc_bytes"] = t.alloc_bytes;
    j["offset"] = t.offset;
  }
  return j;
}

WireTensor wire_tensor_from_json(const ordered_json& j) {
  WireTensor t;
  t.spec = tensor_spec_from_json(j);
  return parsed("tensor", [&] {
    if (j.contains("fd_index")) {
      t.fd_index = j.at("fd_index").get<int>();
      t.alloc_bytes = j.at("alloc_bytes").get<std::size_t>();
      t.offset = j.at("offset").get<std::size_t>();
      if (t.fd_index < 0 || t.offset + t.spec.bytes() > t.alloc_bytes)
        throw InputError(kLib, "tensor " + t.spec.name + " does not fit its shared allocation");
    }
    return t;
  });
}

BaselineSetup baseline_setup(const ResolvedWorkload& w) {
  return {w.definition->json_text, w.workload.uuid, w.workload.axes, w.workload.inputs};
}

Workload baseline_workload(const BaselineSetup& b, const std::string& definition_name) {
  Workload w;
  w.definition = definition_name;
  w.uuid = b.workload;
  w.axes = b.axes;
  w.inputs = b.inputs;
  return w;
}

ordered_json to_json(const RunnerRequest& r) {
  ordered_json j = {{"op", to_string(r.op)}, {"seq", r.seq}};
  if (r.setup) {
    ordered_json tensors = ordered_json::array();
    for (const auto& t : r.setup->tensors) tensors.push_back(to_json(t));
    j["library"] = r.setup->library;
    if (r.setup->triton) j["language"] = "triton";
    if (const auto& b = r.setup->baseline) {
      ordered_json inputs = ordered_json::object();
      for (const auto& [name, s] : b->inputs) {
        inputs[name] = {{"type", s.kind}};
        if (s.kind == "scalar") inputs[name]["value"] = s.value;
      }
      j["baseline"] = {{"definition", b->definition}, {"workload", b->workload}, {"axes", b->axes}, {"inputs", inputs}};
    }
    j["tensors"] = tensors;
    if (r.setup->flush_fd_index >= 0) j["l2_flush"] = {{"fd_index", r.setup->flush_fd_index}, {"bytes", r.setup->flush_bytes}};
  }
  if (r.call) {
    j["index"] = r.call->index;
    j["target"] = r.call->target == CallTarget::probe ? "probe" : "candidate";
    if (r.call->target == CallTarget::probe) j["probe_us"] = r.call->probe_us;
  }
  return j;
}

RunnerRequest runner_request_from_json(const ordered_json& j) {
  RunnerRequest r;
  r.op = parse_runner_op(parsed("request", [&] { return j.at("op").get<std::string>(); }));
  r.seq = parsed("request", [&] { return j.value("seq", uint64_t{0}); });
  if (r.op == RunnerOp::setup) {
    r.setup = parsed("setup request", [&] {
      SetupRequest s;
      s.library = j.at("library").get<std::string>();
      std::string language = j.value("language", std::string("cuda"));
      if (language != "cuda" && language != "triton") throw InputError(kLib, "unknown candidate language '" + language + "'");
      s.triton = language == "triton";
      if (j.contains("baseline")) {
        const auto& b = j.at("baseline");
        s.baseline = BaselineSetup{b.at("definition").get<std::string>(), b.at("workload").get<std::string>(),
                                   b.at("axes").get<std::map<std::string, int64_t>>(), {}};
        const ordered_json inputs = b.value("inputs", ordered_json::object());
        for (const auto& [name, sampler] : inputs.items())
          s.baseline->inputs[name] = InputSampler{sampler.at("type").get<std::string>(), sampler.value("value", 0.0)};
      }
      if (j.contains("l2_flush")) {
        s.flush_fd_index = j.at("l2_flush").at("fd_index").get<int>();
        s.flush_bytes = j.at("l2_flush").at("bytes").get<std::size_t>();
        if (s.flush_fd_index < 0 || s.flush_bytes == 0 || s.flush_bytes > (std::size_t{16} << 30))
          throw InputError(kLib, "the L2 flush buffer needs a descriptor and 1 B to 16 GiB");
      }
      if (s.library.empty() == !s.baseline)
        throw InputError(kLib, "a setup request names either a candidate library or a baseline, and not both");
      if (s.triton && s.baseline) throw InputError(kLib, "a baseline setup has no candidate language");
      for (const auto& t : j.at("tensors")) s.tensors.push_back(wire_tensor_from_json(t));
      return s;
    });
  }
  if (r.op == RunnerOp::call) {
    r.call = parsed("call request", [&] {
      CallRequest c;
      c.index = j.at("index").get<uint64_t>();
      std::string target = j.at("target").get<std::string>();
      if (target != "probe" && target != "candidate") throw InputError(kLib, "unknown call target '" + target + "'");
      c.target = target == "probe" ? CallTarget::probe : CallTarget::candidate;
      c.probe_us = j.value("probe_us", 0.0);
      return c;
    });
  }
  return r;
}

ordered_json to_json(const RunnerReply& r) {
  ordered_json j = {{"ok", r.ok()}, {"seq", r.seq}};
  if (r.ready) j["ready"] = true;
  if (r.failure)
    j["failure"] = {{"kind", enum_name(kFailureKinds, r.failure->kind)}, {"code", r.failure->code},
                    {"error", r.failure->error}};
  if (!r.violations.empty()) j["violations"] = r.violations;
  if (r.wall_us) j["wall_us"] = *r.wall_us;
  if (r.spans) {
    ordered_json calls = ordered_json::array();
    for (const auto& c : r.spans->calls) calls.push_back(to_json(c));
    j["spans"] = {{"calls", calls}, {"stray", r.spans->stray}, {"dropped_records", r.spans->dropped_records}};
  }
  if (!r.seccomp.empty()) j["seccomp"] = r.seccomp;
  if (!r.proc_view.empty()) j["proc_view"] = r.proc_view;
  if (!r.baseline.empty()) j["baseline"] = r.baseline;
  return j;
}

RunnerReply runner_reply_from_json(const ordered_json& j) {
  return parsed("reply", [&] {
    RunnerReply r;
    r.seq = j.value("seq", uint64_t{0});
    r.ready = j.value("ready", false);
    if (j.contains("failure")) {
      const auto& f = j.at("failure");
      r.failure = RunnerFailureInfo{parse_enum(kFailureKinds, f.at("kind").get<std::string>(), "failure kind", kLib),
                                    f.at("code").get<int>(), f.at("error").get<std::string>()};
    } else if (!j.at("ok").get<bool>()) {
      throw InputError(kLib, "a failed reply without its failure");
    }
    if (j.contains("violations")) r.violations = j.at("violations").get<std::vector<std::string>>();
    if (j.contains("wall_us")) r.wall_us = j.at("wall_us").get<double>();
    if (j.contains("spans")) {
      const auto& s = j.at("spans");
      SpansReport rep;
      for (const auto& c : s.at("calls")) rep.calls.push_back(call_activity_from_json(c));
      rep.stray = s.at("stray").get<std::vector<std::string>>();
      rep.dropped_records = s.at("dropped_records").get<uint64_t>();
      r.spans = rep;
    }
    r.seccomp = j.value("seccomp", std::string());
    r.proc_view = j.value("proc_view", std::string());
    r.baseline = j.value("baseline", std::string());
    return r;
  });
}

RunnerRequest call_request(uint64_t index, CallTarget target, double probe_us) {
  RunnerRequest r;
  r.op = RunnerOp::call;
  r.call = CallRequest{index, target, probe_us};
  return r;
}

RunnerRequest spans_request() {
  RunnerRequest r;
  r.op = RunnerOp::spans;
  return r;
}

}  // namespace ptxbench

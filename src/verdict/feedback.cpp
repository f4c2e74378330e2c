#include "verdict/feedback.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/text.h"

namespace ptxbench {
namespace {

constexpr std::string_view kCutMarker = "\n[... {} more characters cut ...]";

// As the document writes it: a non-finite value is "nan", "inf" or "-inf" (never "-nan").
std::string number_text(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", x);
}

std::string index_text(const std::vector<int64_t>& idx) {
  std::string s;
  for (int64_t i : idx) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return "[" + s + "]";
}

void compile_section(std::string& out, const CompileSection& c) {
  if (c.status != CompileStatus::ok) {
    out += "Compile: " + to_string(c.status) + ".\n";
    if (c.build && !c.build->log.empty()) out += "Compiler output:\n" + cut(c.build->log, 3000, kCutMarker) + "\n";
    return;
  }
  out += "Compile: ok.";
  if (c.build) {
    for (const auto& k : c.build->ptxas.kernels)
      out += fmt::format("\n  {}: {} registers, {} B static shared memory, {} B stack, {} B spill stores, {} B spill loads",
                         k.name, k.registers, k.smem_bytes, k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes);
    for (const auto& w : c.build->ptxas.warnings) out += "\n  " + w;
  }
  out += "\n";
}

void correctness_section(std::string& out, const CorrectnessSection& c) {
  for (const auto& t : c.trials) {
    if (t.passed) continue;
    out += fmt::format("Correctness: trial {} of {} ({}) failed", t.trial, c.trials_planned, to_string(t.phase));
    if (t.error) out += ": " + *t.error;
    out += ".\n";
    for (const auto& tensor : t.tensors.value_or(std::vector<TensorComparison>{})) {
      if (tensor.passed) continue;
      out += fmt::format("  {}: {} of {} elements mismatched ({} NaN/Inf); max abs error {:.4g}, max rel error {:.4g}\n",
                         tensor.name, tensor.mismatches, tensor.elements, tensor.non_finite, tensor.max_abs_error,
                         tensor.max_rel_error);
      std::string first;
      for (const auto& m : tensor.first_mismatches)
        first += fmt::format("{}{}{} = {} (expected {})", first.empty() ? "" : "; ", tensor.name,
                             index_text(m.index), number_text(m.got), number_text(m.expected));
      if (!first.empty()) out += "  first mismatches: " + first + "\n";
    }
    return;
  }
  if (!c.trials.empty())
    out += fmt::format("Correctness: {} trials passed (fresh inputs each, outputs poisoned with NaN before each call).\n",
                       c.trials.size());
}

const char* yes(bool b) { return b ? "yes" : "no"; }

void runtime_section(std::string& out, const Verdict& v) {
  if (const auto& s = v.stages.static_sass; s && s->available)
    out += fmt::format("Static SASS (in the binary): GMMA {}, TMA {}, tcgen05 {}.\n", s->counts.gmma, s->counts.tma,
                       s->counts.tcgen05);
  const auto& r = v.stages.runtime_sass;
  if (!r) return;
  if (!r->measured()) {
    out += "Runtime SASS: not measured (" + r->note + ").\n";
    return;
  }
  const Mechanisms& m = r->mechanisms;
  out += fmt::format("Executed at run time (predicate-true thread instructions): GMMA {}, TMA {}, tcgen05 {}. "
                     "Mechanisms: C_Gen4 (wgmma) {}, D_TMA (bulk tensor copy) {}, C_Gen5 {}, D_TMEM {}.\n",
                     r->counts.gmma, r->counts.tma, r->counts.tcgen05, yes(m.c_gen4), yes(m.d_tma), yes(m.c_gen5),
                     yes(m.d_tmem));
  if (const auto& t = v.stages.timing; t && t->integrity && t->integrity->profile_check && !t->integrity->profile_check->holds)
    out += "The profiled call does not describe the timed calls (" + t->integrity->profile_check->reasons.front() +
           "): these mechanisms and the tensor-core coverage are not credited.\n";
  out += fmt::format("Target-instruction correct: {} (rule: {}).\n", yes(v.target_instruction_correct), v.rule());
}

void timing_section(std::string& out, const Verdict& v) {
  const auto& t = v.stages.timing;
  if (!t || !t->result) return;
  const TimingResult& r = *t->result;
  TimingPolicyRecord policy = t->policy.value_or(TimingPolicyRecord{});
  out += fmt::format("Timing (cold L2, device span of all your kernels, {} trials x {} calls after {} warm-up): "
                     "your kernel {:.1f} us (trial spread {:.1f}%), {} {:.1f} us; speedup {:.3f}x (spread {:.1f}%).\n",
                     policy.trials, policy.timed_calls, policy.warmup_calls, r.candidate.mean_us,
                     100.0 * r.candidate.spread, v.baseline_name, r.baseline.mean_us, r.speedup,
                     100.0 * r.speedup_spread);
  if (const auto& in = t->integrity) {
    std::string fresh;
    for (const auto& name : in->fresh_inputs) fresh += (fresh.empty() ? "" : ", ") + name;
    int full = 0;
    for (const auto& f : in->full_checks) full += f.passed ? 1 : 0;
    std::string host;
    if (const auto& h = in->host_charge)
      host = fmt::format("; the worker's own clock saw {:.0f} us per call beyond your spans (allowed {:.0f} us{}){}", h->excess_us,
                         h->allowed_us,
                         h->launch_allowance_us.value_or(0.0) > 0
                             ? fmt::format(", of which {:.0f} us for Triton's own launch path", *h->launch_allowance_us)
                             : "",
                         h->charged_us > 0 ? fmt::format(", so each call was charged {:.0f} us more", h->charged_us) : "");
    out += fmt::format("Integrity: fresh {} before every call; {} timed calls checked on {} random rows per output and "
                       "{} checked in full (chosen at random){}.\n",
                       fresh.empty() ? "inputs" : fresh, in->spot_checked_calls, in->spot_rows, full, host);
  }
  if (r.below_floor)
    out += fmt::format("This time is below the roofline floor of {:.1f} us for this workload, which no correct "
                       "kernel can reach: the measurement was evaded or the work was skipped.\n",
                       r.floor_us);
}

}  // namespace

std::string render_feedback(const Verdict& v, std::size_t max_chars) {
  // A verdict given before the evaluation began (the service's own INFRA_ERROR) names nothing.
  bool anonymous = v.definition.empty() && v.workload_label.empty() && v.arch.empty();
  std::string out = anonymous ? fmt::format("Verdict: {}\n", to_string(v.status))
                              : fmt::format("Verdict: {} ({}, workload {}, {})\n", to_string(v.status), v.definition,
                                            v.workload_label, v.arch);
  if (!v.message.empty()) out += v.message + "\n";
  if (v.stages.compile) compile_section(out, *v.stages.compile);
  if (const auto& s = v.stages.sanitize; s && !s->passed.value_or(true) && s->report)
    out += "compute-sanitizer memcheck report:\n" + cut(*s->report, 2000, kCutMarker) + "\n";
  if (v.stages.correctness) correctness_section(out, *v.stages.correctness);
  if (v.stages.runner_output && !v.stages.runner_output->empty())
    out += "Your program's output (cut):\n" + cut(*v.stages.runner_output, 1500, kCutMarker) + "\n";
  runtime_section(out, v);
  timing_section(out, v);
  return cut(out, max_chars, kCutMarker);
}

}  // namespace ptxbench

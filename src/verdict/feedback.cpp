#include "verdict/feedback.h"

#include <fmt/format.h>

namespace ptxbench {
namespace {

std::string cut(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n) + "\n[... " + std::to_string(s.size() - n) + " more characters cut ...]";
}

std::string value_text(const ordered_json& v) {
  if (v.is_number()) return fmt::format("{:.6g}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string index_text(const ordered_json& idx) {
  std::string s;
  for (const auto& i : idx) s += (s.empty() ? "" : ", ") + std::to_string(i.get<long long>());
  return "[" + s + "]";
}

void compile_section(std::string& out, const ordered_json& c) {
  std::string status = c.value("status", "");
  if (status != "ok") {
    out += "Compile: " + status + ".\n";
    std::string log = c.value("log", "");
    if (!log.empty()) out += "Compiler output:\n" + cut(log, 3000) + "\n";
    return;
  }
  out += "Compile: ok.";
  for (const auto& k : c["ptxas"]["kernels"])
    out += fmt::format("\n  {}: {} registers, {} B static shared memory, {} B stack, {} B spill stores, {} B spill loads",
                       k.value("name", ""), k.value("registers", 0), k.value("smem_bytes", 0L),
                       k.value("stack_frame_bytes", 0L), k.value("spill_store_bytes", 0L),
                       k.value("spill_load_bytes", 0L));
  for (const auto& w : c["ptxas"]["warnings"]) out += "\n  " + w.get<std::string>();
  out += "\n";
}

void correctness_section(std::string& out, const ordered_json& c) {
  const auto& trials = c["trials"];
  int total = c.value("trials_planned", static_cast<int>(trials.size()));
  for (const auto& t : trials) {
    if (t.value("passed", false)) continue;
    out += fmt::format("Correctness: trial {} of {} ({}) failed", t.value("trial", 0), total,
                       t.value("phase", "correctness"));
    if (t.contains("error")) out += ": " + t["error"].get<std::string>();
    out += ".\n";
    for (const auto& tensor : t["tensors"]) {
      if (tensor.value("passed", false)) continue;
      out += fmt::format("  {}: {} of {} elements mismatched ({} NaN/Inf); max abs error {:.4g}, max rel error {:.4g}\n",
                         tensor.value("name", ""), tensor.value("mismatches", 0LL),
                         tensor.value("elements", 0LL), tensor.value("non_finite", 0LL),
                         tensor.value("max_abs_error", 0.0), tensor.value("max_rel_error", 0.0));
      std::string first;
      for (const auto& m : tensor["first_mismatches"])
        first += fmt::format("{}{}{} = {} (expected {})", first.empty() ? "" : "; ", tensor.value("name", ""),
                             index_text(m["index"]), value_text(m["got"]), value_text(m["expected"]));
      if (!first.empty()) out += "  first mismatches: " + first + "\n";
    }
    return;
  }
  if (!trials.empty())
    out += fmt::format("Correctness: {} trials passed (fresh inputs each, outputs poisoned with NaN before each call).\n",
                       trials.size());
}

void runtime_section(std::string& out, const ordered_json& v) {
  const auto& stages = v["stages"];
  if (stages.contains("static_sass") && stages["static_sass"].value("available", false)) {
    const auto& s = stages["static_sass"];
    out += fmt::format("Static SASS (in the binary): GMMA {}, TMA {}, tcgen05 {}.\n", s.value("gmma", 0LL),
                       s.value("tma", 0LL), s.value("tcgen05", 0LL));
  }
  if (!stages.contains("runtime_sass")) return;
  const auto& r = stages["runtime_sass"];
  if (!r.value("available", false)) {
    out += "Runtime SASS: not measured (" + r.value("note", "") + ").\n";
    return;
  }
  const auto& m = r["mechanisms"];
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  out += fmt::format("Executed at run time (predicate-true thread instructions): GMMA {}, TMA {}, tcgen05 {}. "
                     "Mechanisms: C_Gen4 (wgmma) {}, D_TMA (bulk tensor copy) {}, C_Gen5 {}, D_TMEM {}.\n",
                     r.value("gmma", 0LL), r.value("tma", 0LL), r.value("tcgen05", 0LL), yes(m.value("c_gen4", false)),
                     yes(m.value("d_tma", false)), yes(m.value("c_gen5", false)), yes(m.value("d_tmem", false)));
  const auto& ti = v["target_instruction"];
  out += fmt::format("Target-instruction correct: {} (rule: {}).\n", yes(ti.value("correct", false)),
                     ti.value("rule", ""));
}

void timing_section(std::string& out, const ordered_json& v) {
  if (!v["stages"].contains("timing")) return;
  const auto& t = v["stages"]["timing"];
  if (!t.contains("candidate")) return;
  const auto& policy = t["policy"];
  out += fmt::format("Timing (cold L2, device span of all your kernels, {} trials x {} calls after {} warm-up): "
                     "your kernel {:.1f} us (trial spread {:.1f}%), {} {:.1f} us; speedup {:.3f}x (spread {:.1f}%).\n",
                     policy.value("trials", 0), policy.value("timed_calls", 0), policy.value("warmup_calls", 0),
                     t["candidate"].value("mean_us", 0.0), 100.0 * t["candidate"].value("spread", 0.0),
                     v.value("baseline", "baseline"), t["baseline"].value("mean_us", 0.0), t.value("speedup", 0.0),
                     100.0 * t.value("speedup_spread", 0.0));
  if (t.value("below_floor", false))
    out += fmt::format("This time is below the roofline floor of {:.1f} us for this workload, which no correct "
                       "kernel can reach: the measurement was evaded or the work was skipped.\n",
                       t.value("floor_us", 0.0));
}

}  // namespace

std::string render_feedback(const ordered_json& v, std::size_t max_chars) {
  std::string out = fmt::format("Verdict: {} ({}, workload {}, {})\n", v.value("status", "?"),
                                v.value("definition", "?"), v["workload"].value("label", "?"),
                                v.value("arch", "?"));
  std::string message = v.value("message", "");
  if (!message.empty()) out += message + "\n";
  const auto& stages = v["stages"];
  if (stages.contains("compile")) compile_section(out, stages["compile"]);
  if (stages.contains("sanitize")) {
    const auto& s = stages["sanitize"];
    if (!s.value("passed", true) && s.contains("report"))
      out += "compute-sanitizer memcheck report:\n" + cut(s["report"].get<std::string>(), 2000) + "\n";
  }
  if (stages.contains("correctness")) correctness_section(out, stages["correctness"]);
  if (stages.contains("runner_output") && !stages["runner_output"].get<std::string>().empty())
    out += "Your program's output (cut):\n" + cut(stages["runner_output"].get<std::string>(), 1500) + "\n";
  runtime_section(out, v);
  timing_section(out, v);
  return cut(out, max_chars);
}

}  // namespace ptxbench

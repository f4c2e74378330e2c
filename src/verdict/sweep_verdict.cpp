#include "verdict/sweep_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/json_fields.h"
#include "verdict/feedback.h"

namespace ptxbench {
namespace {

constexpr const char* kRow = "{:<16} {:<20} {:>10} {:>10} {:>8} {:>6}\n";

std::string number(const std::optional<double>& x, int precision) {
  return x ? fmt::format("{:.{}f}", *x, precision) : std::string("-");
}

// "1 workload", "5 workloads"
std::string workloads(std::size_t n) { return fmt::format("{} workload{}", n, n == 1 ? "" : "s"); }

std::string place(const SweepVerdict& s, std::size_t i) {
  return fmt::format("{} ({} of {})", s.entries[i].workload_label, i + 1, s.entries.size());
}

// "; 3 of 5 workloads PASSED, 1 not evaluated"
std::string tally(const SweepVerdict& s) {
  std::size_t missing = s.entries.size() - s.evaluated;
  return fmt::format("; {} of {} PASSED{}", s.passed, workloads(s.entries.size()),
                     missing ? fmt::format(", {} not evaluated", missing) : "");
}

std::string message_of(const SweepVerdict& s) {
  if (s.entries.empty()) return "no workload in the sweep";
  if (s.status == Status::PASSED) {
    std::string out = fmt::format("PASSED at every workload ({} of {})", s.passed, s.entries.size());
    if (s.geomean_speedup && s.worst)
      out += fmt::format("; geometric-mean speedup {:.3f}x, worst {:.3f}x at {}", *s.geomean_speedup, *s.worst_speedup,
                         s.entries[*s.worst].workload_label);
    return out;
  }
  std::size_t i = *s.deciding;
  const auto& v = s.entries[i].verdict;
  if (!v) return "workload " + place(s, i) + " was not evaluated" + tally(s);
  return fmt::format("{} at workload {}: {}{}", to_string(v->status), place(s, i),
                     v->message.empty() ? "(no message)" : v->message, tally(s));
}

}  // namespace

SweepEntry sweep_entry(const Definition& def, const Workload& w, std::optional<Verdict> verdict) {
  return {w.uuid, w.label(def), w.axes, std::move(verdict)};
}

SweepVerdict aggregate_sweep(std::string definition, std::vector<SweepEntry> entries) {
  SweepVerdict s;
  s.definition = std::move(definition);
  s.entries = std::move(entries);
  std::optional<std::size_t> infra, failed, missing;
  bool all_coverage = !s.entries.empty();
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    const auto& v = s.entries[i].verdict;
    if (!v) {
      if (!missing) missing = i;
      all_coverage = false;
      continue;
    }
    ++s.evaluated;
    if (v->status == Status::PASSED) ++s.passed;
    else if (v->status == Status::INFRA_ERROR && !infra) infra = i;
    else if (v->status != Status::INFRA_ERROR && !failed) failed = i;
    if (v->tensor_core_coverage)
      s.tensor_core_coverage = std::min(s.tensor_core_coverage.value_or(*v->tensor_core_coverage), *v->tensor_core_coverage);
    else
      all_coverage = false;
  }
  if (!all_coverage) s.tensor_core_coverage.reset();
  // An INFRA_ERROR anywhere makes the sweep incomplete: ours, re-run, never held against the kernel.
  s.deciding = infra ? infra : failed ? failed : missing;
  if (s.entries.empty()) s.status = Status::INFRA_ERROR;
  else if (s.deciding) s.status = s.entries[*s.deciding].verdict ? s.entries[*s.deciding].verdict->status : Status::INFRA_ERROR;
  else s.status = Status::PASSED;

  if (s.status == Status::PASSED) {
    // The geometric mean: speedups are ratios, and a 2x at one workload and 0.5x at another is no gain.
    double log_sum = 0;
    bool timed = true;
    s.target_instruction_correct = s.target_instruction_strict = true;
    for (std::size_t i = 0; i < s.entries.size(); ++i) {
      const Verdict& v = *s.entries[i].verdict;
      s.target_instruction_correct = s.target_instruction_correct && v.target_instruction_correct;
      s.target_instruction_strict = s.target_instruction_strict && v.target_instruction_strict;
      if (!v.speedup || !(*v.speedup > 0) || !std::isfinite(*v.speedup)) {
        timed = false;
        continue;
      }
      log_sum += std::log(*v.speedup);
      if (!s.worst || *v.speedup < *s.entries[*s.worst].verdict->speedup) s.worst = i;
    }
    if (timed) {
      s.geomean_speedup = std::exp(log_sum / static_cast<double>(s.entries.size()));
      s.worst_speedup = s.entries[*s.worst].verdict->speedup;
    } else {
      s.worst.reset();
    }
    // The strict claim rests on a measured coverage at every workload, as for one verdict.
    if (!s.tensor_core_coverage) s.target_instruction_strict = false;
  }
  s.message = message_of(s);
  return s;
}

const SweepEntry* SweepVerdict::representative() const {
  if (entries.empty()) return nullptr;
  if (deciding) return &entries[*deciding];
  if (worst) return &entries[*worst];
  return &entries.front();
}

SweepVerdict run_sweep(const Definition& def, const std::vector<const Workload*>& workloads,
                       const std::function<Verdict(const Workload&)>& evaluate, const SweepOptions& options) {
  std::vector<SweepEntry> entries;
  bool stopped = false;
  for (const Workload* w : workloads) {
    std::optional<Verdict> v;
    if (!stopped) {
      v = evaluate(*w);
      stopped = options.stop_at_failure && v->status != Status::PASSED && v->status != Status::INFRA_ERROR;
    }
    entries.push_back(sweep_entry(def, *w, std::move(v)));
    if (options.on_entry) options.on_entry(entries.back());
  }
  return aggregate_sweep(def.name, std::move(entries));
}

ordered_json SweepVerdict::to_json() const {
  auto uuid_at = [this](const std::optional<std::size_t>& i) {
    return i ? ordered_json(entries[*i].workload_uuid) : ordered_json(nullptr);
  };
  ordered_json j;
  j["schema"] = kSweepSchema;
  j["schema_version"] = kSweepSchemaVersion;
  j["definition"] = definition;
  j["status"] = to_string(status);
  j["message"] = message;
  j["all_correct"] = all_correct();
  j["deciding_workload"] = uuid_at(deciding);
  j["workloads_total"] = entries.size();
  j["workloads_evaluated"] = evaluated;
  j["workloads_passed"] = passed;
  j["geomean_speedup"] = value_or_null(geomean_speedup);
  j["worst_speedup"] = value_or_null(worst_speedup);
  j["worst_workload"] = uuid_at(worst);
  j["target_instruction"] = {{"correct", target_instruction_correct},
                             {"strict_correct", target_instruction_strict},
                             {"coverage", value_or_null(tensor_core_coverage)}};
  ordered_json list = ordered_json::array();
  for (const auto& e : entries)
    list.push_back({{"uuid", e.workload_uuid},
                    {"label", e.workload_label},
                    {"axes", e.axes},
                    {"verdict", e.verdict ? e.verdict->to_json() : ordered_json(nullptr)}});
  j["workloads"] = list;
  return j;
}

SweepVerdict SweepVerdict::from_json(const ordered_json& j) {
  std::string definition;
  std::vector<SweepEntry> entries;
  std::string at;  // the field being read, for errors that are not JsonFieldErrors (a verdict's)
  try {
    require_json_object(j);
    check_schema(j, kSweepSchema, kSweepSchemaVersion, "a workload sweep");
    read_field(j, "definition", definition);
    if (!j.contains("workloads") || !j["workloads"].is_array()) throw JsonFieldError("workloads", "expected a list");
    for (std::size_t i = 0; i < j["workloads"].size(); ++i) {
      at = "workloads[" + std::to_string(i) + "]";
      const auto& w = j["workloads"][i];
      if (!w.is_object()) throw JsonFieldError(at, "expected an object");
      SweepEntry e;
      try {
        read_field(w, "uuid", e.workload_uuid);
        read_field(w, "label", e.workload_label);
        read_field(w, "axes", e.axes);
      } catch (...) {
        detail::rethrow_in_field(at);
      }
      if (e.workload_uuid.empty()) throw JsonFieldError(at + ".uuid", "missing");
      if (w.contains("verdict") && !w["verdict"].is_null()) {
        at += ".verdict";
        e.verdict = Verdict::from_json(w["verdict"]);
      }
      entries.push_back(std::move(e));
    }
  } catch (const JsonFieldError& e) {
    throw InputError("sweep", (e.path().empty() ? "(top level)" : e.path()) + ": " + e.reason());
  } catch (const InputError& e) {
    throw InputError("sweep", at + ": " + JsonChecker::message_of(e));
  }
  return aggregate_sweep(std::move(definition), std::move(entries));
}

Verdict SweepVerdict::aggregate_verdict() const {
  Verdict v;
  if (const SweepEntry* rep = representative(); rep && rep->verdict) v = *rep->verdict;
  v.extra = ordered_json::object();  // the representative's own stamps are not the sweep's
  v.status = status;
  v.message = message;
  v.definition = definition;
  v.workload_uuid.clear();
  v.workload_label = "sweep of " + workloads(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) v.workload_label += (i ? ", " : ": ") + entries[i].workload_label;
  v.target_instruction_correct = target_instruction_correct;
  v.target_instruction_strict = target_instruction_strict;
  v.tensor_core_coverage = tensor_core_coverage;
  // A mechanism counts for the sweep when it executed at every workload.
  std::optional<Mechanisms> every;
  bool all_measured = evaluated == entries.size() && !entries.empty();
  for (const auto& e : entries) {
    if (!e.verdict || !e.verdict->runtime_mechanisms) {
      all_measured = false;
      break;
    }
    const Mechanisms& m = *e.verdict->runtime_mechanisms;
    if (!every) every = m;
    every->c_gen4 = every->c_gen4 && m.c_gen4;
    every->d_tma = every->d_tma && m.d_tma;
    every->c_gen5 = every->c_gen5 && m.c_gen5;
    every->d_tmem = every->d_tmem && m.d_tmem;
  }
  v.runtime_mechanisms = all_measured ? every : std::nullopt;
  v.speedup = geomean_speedup;
  v.candidate_us.reset();
  v.baseline_us.reset();
  v.wall_seconds = 0;
  bool first = true;
  for (const auto& e : entries) {
    if (!e.verdict) continue;
    if (first) v.started_at = e.verdict->started_at;
    first = false;
    v.wall_seconds += e.verdict->wall_seconds;
    v.fake_backend = v.fake_backend || e.verdict->fake_backend;
  }
  v.extra[kSweepVerdictKey] = to_json();
  return v;
}

std::string sweep_table_header() { return fmt::format(kRow, "workload", "status", "time_us", "base_us", "speedup", "target"); }

std::string sweep_table_row(const SweepEntry& e) {
  if (!e.verdict) return fmt::format(kRow, e.workload_label, "not evaluated", "-", "-", "-", "-");
  const Verdict& v = *e.verdict;
  std::string target = v.runtime_mechanisms ? (v.target_instruction_correct ? "yes" : "no") : "-";
  return fmt::format(kRow, e.workload_label, to_string(v.status), number(v.candidate_us, 1), number(v.baseline_us, 1),
                     number(v.speedup, 3), target);
}

std::string sweep_table(const SweepVerdict& s) {
  std::string out = sweep_table_header();
  for (const auto& e : s.entries) out += sweep_table_row(e);
  return out;
}

std::string sweep_summary(const SweepVerdict& s) {
  std::string correct = s.all_correct() ? fmt::format("yes ({} of {} PASSED)", s.passed, s.entries.size())
                                        : fmt::format("no ({}{})", s.deciding ? to_string(s.status) + " at " +
                                                                                    s.entries[*s.deciding].workload_label
                                                                              : to_string(s.status),
                                                      tally(s));
  std::string worst = s.worst ? fmt::format("{:.3f} at {}", *s.worst_speedup, s.entries[*s.worst].workload_label) : "-";
  return fmt::format("all correct: {}; geomean speedup {}; worst {}; target-instruction correct at every workload: {}",
                     correct, number(s.geomean_speedup, 3), worst, s.target_instruction_correct ? "yes" : "no");
}

std::string render_sweep_feedback(const SweepVerdict& s, std::size_t max_chars) {
  const SweepEntry* rep = s.representative();
  std::string arch = rep && rep->verdict ? rep->verdict->arch : "";
  std::string out = fmt::format("Verdict over {} of {}{}: {}\n", workloads(s.entries.size()), s.definition,
                                arch.empty() ? "" : " (" + arch + ")", to_string(s.status));
  out += "The same kernel ran at every workload below. It is correct only if correct at each one, and its speedup is "
         "the geometric mean of the speedups at all of them.\n";
  out += s.message + "\n\n" + sweep_table(s) + sweep_summary(s) + "\n";
  if (rep && rep->verdict) {
    out += fmt::format("\nDetails of workload {}{}:\n", rep->workload_label,
                       s.status == Status::PASSED ? (s.worst ? " (the slowest against the baseline)" : "") : "");
    // The details get what the table left of the budget, and never less than a useful start.
    constexpr std::size_t kLeast = 1500;
    out += render_feedback(*rep->verdict, std::max(kLeast, max_chars > out.size() ? max_chars - out.size() : 0));
  }
  return out;
}

std::optional<SweepVerdict> sweep_of(const Verdict& v) {
  if (!v.extra.is_object() || !v.extra.contains(kSweepVerdictKey) || !v.extra[kSweepVerdictKey].is_object())
    return std::nullopt;
  return SweepVerdict::from_json(v.extra[kSweepVerdictKey]);
}

std::string render_turn_feedback(const Verdict& v) {
  if (auto s = sweep_of(v)) return render_sweep_feedback(*s);
  return render_feedback(v);
}

}  // namespace ptxbench

#include "cli/eval_args.h"

#include <fmt/format.h>

#include "common/fs.h"
#include "verdict/feedback.h"

namespace ptxbench::cli {
namespace {

std::string yes_no(const std::optional<bool>& v) { return v ? (*v ? "yes" : "no") : "-"; }

std::string number(const std::optional<double>& x, int precision) {
  return x ? fmt::format("{:.{}f}", *x, precision) : std::string("-");
}

constexpr const char* kRow = "{:<30} {:<20} {:>6} {:>6} {:>6} {:>10} {:>10} {:>8} {:>7}";

}  // namespace

void add_eval_options(CLI::App* cmd, EvalArgs& a) {
  cmd->add_option("--workload", a.workload, "workload uuid or axis values like M=8192 (default: the definition's default)");
  cmd->add_flag("--json", a.json, "print each verdict as one JSON line (JSON lines on stdout)");
  cmd->add_flag("--feedback", a.feedback, "print the feedback text a model would see");
  cmd->add_option("--out", a.out_dir, "also write each verdict to DIR/<name>.verdict.json");
  cmd->add_option("--repeat", a.repeat, "evaluate each candidate N times (measurement spread)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "input seed (default: random, recorded in the verdict)");
  // Unset (0) leaves the evaluator's default, shown from EvalOptions.
  cmd->add_option("--trials", a.trials, "correctness and timing trials")->default_str(std::to_string(EvalOptions{}.correctness_trials));
  cmd->add_option("--device", a.device, "CUDA device index")->capture_default_str();
  cmd->add_flag("--no-sanitize", a.no_sanitize, "skip compute-sanitizer (recorded in the verdict)");
  cmd->add_flag("--no-profile", a.no_profile, "skip runtime SASS counts (no target-instruction verdict)");
  cmd->add_flag("--no-time", a.no_time, "skip timing");
  cmd->add_option("--sass-tool", a.sass_tool, "runtime SASS counts through ncu or cupti (experimental)")
      ->check(CLI::IsMember({"cupti", "ncu"}))
      ->capture_default_str();
  cmd->add_flag("--profile-always", a.profile_always,
                "profile even a cubin without wgmma/TMA/tcgen05 opcodes (to compare the SASS tools)");
  cmd->add_flag("--runner-l2-flush", a.runner_l2_flush,
                "experimental: the runners also flush L2 in their own context before each call (docs/verdict.md)");
  cmd->add_flag("--no-fresh-inputs", a.no_fresh_inputs,
                "diagnostic: keep each timing trial's inputs across its calls, to measure what the integrity "
                "rule of fresh inputs per call costs an honest kernel (recorded in the verdict; reports flag it)");
  add_timeout_options(cmd, a.sanitize_timeout, a.call_timeout);
}

void add_timeout_options(CLI::App* cmd, double& sanitize_timeout, double& call_timeout) {
  const EvalOptions defaults;
  cmd->add_option("--sanitize-timeout", sanitize_timeout, "seconds per compute-sanitizer run")
      ->default_str(fmt::format("{}", defaults.sanitize_timeout_s));
  cmd->add_option("--call-timeout", call_timeout, "seconds per correctness call")
      ->default_str(fmt::format("{}", defaults.call_timeout_s));
}

void add_token_file_option(CLI::App* cmd, std::string& token_file) {
  cmd->add_option("--token-file", token_file,
                  "file (mode 600) holding the service's access token (default: $PTXBENCH_TOKEN when set)");
}

EvalOptions to_eval_options(const EvalArgs& a) {
  EvalOptions o;
  o.device = a.device;
  if (a.seed >= 0) o.seed = static_cast<uint64_t>(a.seed);
  if (a.trials > 0) o.correctness_trials = o.timing.trials = a.trials;
  o.sanitize = !a.no_sanitize;
  o.profile = !a.no_profile;
  o.sass_tool = parse_sass_tool(a.sass_tool);
  o.profile_always = a.profile_always;
  o.measure_time = !a.no_time;
  o.timing.runner_l2_flush = a.runner_l2_flush;
  o.timing.fresh_inputs = !a.no_fresh_inputs;
  if (a.sanitize_timeout > 0) o.sanitize_timeout_s = a.sanitize_timeout;
  if (a.call_timeout > 0) o.call_timeout_s = a.call_timeout;
  return o;
}

VerdictPrinter::VerdictPrinter(const EvalArgs& a, std::string extra_header) : m_args(a) {
  if (!a.out_dir.empty()) fs::create_directories(a.out_dir);
  if (a.json || a.feedback) return;
  fmt::print(kRow, "candidate", "status", "wgmma", "TMA", "target", "time_us", "base_us", "speedup", "wall_s");
  fmt::print("{}\n", extra_header.empty() ? "" : "  " + extra_header);
}

void VerdictPrinter::print(const std::string& label, const ordered_json& v, const std::string& extra) {
  if (!m_args.out_dir.empty())
    write_file_atomic(fs::path(m_args.out_dir) / (label + ".verdict.json"), v.dump(2));
  if (m_args.json) {
    fmt::print("{}\n", v.dump());
  } else if (m_args.feedback) {
    fmt::print("== {} ==\n{}\n", label, render_feedback(Verdict::from_json(v)));
  } else {
    Verdict verdict = Verdict::from_json(v);
    const auto& mech = verdict.runtime_mechanisms;
    fmt::print(kRow, label.substr(0, 30), to_string(verdict.status), yes_no(mech ? std::optional(mech->c_gen4) : std::nullopt),
               yes_no(mech ? std::optional(mech->d_tma) : std::nullopt), yes_no(verdict.target_instruction_correct),
               number(verdict.candidate_us, 1), number(verdict.baseline_us, 1), number(verdict.speedup, 3),
               number(verdict.wall_seconds, 1));
    fmt::print("{}\n", extra.empty() ? "" : "  " + extra);
  }
  std::fflush(stdout);
}

}  // namespace ptxbench::cli

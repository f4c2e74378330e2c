#include "cli/eval_args.h"

#include <fmt/format.h>

#include <cctype>

#include "cli/output_path.h"
#include "common/error.h"
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
  cmd->add_option("--out", a.out_dir,
                  "also write each verdict to DIR/<name>.verdict.json; - prints them as JSON lines on stdout (the "
                  "table then goes to stderr)");
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
  cmd->add_flag("--no-profile-binding", a.no_profile_binding,
                "diagnostic: do not hold the profiled call against the timed calls (no durations or hardware "
                "counters collected; the runtime-SASS claims are then unchecked), to measure what the check costs");
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
  o.integrity.profile.enabled = !a.no_profile_binding;
  if (a.sanitize_timeout > 0) o.sanitize_timeout_s = a.sanitize_timeout;
  if (a.call_timeout > 0) o.call_timeout_s = a.call_timeout;
  return o;
}

VerdictPrinter::VerdictPrinter(const EvalArgs& a, std::string extra_header) : m_args(a) {
  if (is_stdout(a.out_dir)) {
    if (a.json) throw InputError("cli", "--json and --out - both print the verdicts on stdout: give one");
    m_human = stderr;
  } else if (!a.out_dir.empty()) {
    prepare_output_dir("--out", a.out_dir);
  }
  if (a.json || a.feedback) return;
  fmt::print(m_human, kRow, "candidate", "status", "wgmma", "TMA", "target", "time_us", "base_us", "speedup", "wall_s");
  fmt::print(m_human, "{}\n", extra_header.empty() ? "" : "  " + extra_header);
  std::fflush(m_human);
}

void VerdictPrinter::print(const std::string& label, const Verdict& verdict, const std::string& extra) {
  const ordered_json v = verdict.to_json();
  if (is_stdout(m_args.out_dir))
    fmt::print("{}\n", v.dump());
  else if (!m_args.out_dir.empty())
    write_file_atomic(fs::path(m_args.out_dir) / (label + ".verdict.json"), v.dump(2));
  if (m_args.json) {
    fmt::print("{}\n", v.dump());
  } else if (m_args.feedback) {
    fmt::print(m_human, "== {} ==\n{}\n", label, render_feedback(verdict));
  } else {
    const auto& mech = verdict.runtime_mechanisms;
    fmt::print(m_human, kRow, label.substr(0, 30), to_string(verdict.status),
               yes_no(mech ? std::optional(mech->c_gen4) : std::nullopt),
               yes_no(mech ? std::optional(mech->d_tma) : std::nullopt), yes_no(verdict.target_instruction_correct),
               number(verdict.candidate_us, 1), number(verdict.baseline_us, 1), number(verdict.speedup, 3),
               number(verdict.wall_seconds, 1));
    fmt::print(m_human, "{}\n", extra.empty() ? "" : "  " + extra);
  }
  std::fflush(stdout);
  std::fflush(m_human);
}

bool print_infra_reason(const std::string& label, const Verdict& v) {
  if (v.status != Status::INFRA_ERROR) return false;
  fmt::print(stderr, "INFRA_ERROR {}: {}\n", label, v.message.empty() ? "(no reason given)" : v.message);
  std::fflush(stderr);
  return true;
}

std::string name_user_file(const std::string& compiler_output, const std::string& file) {
  static const std::string kName = "candidate.cu";
  auto part_of_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-'; };
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = compiler_output.find(kName, from)) != std::string::npos; from = at + kName.size()) {
    std::size_t end = at + kName.size();
    bool whole = (at == 0 || !part_of_name(compiler_output[at - 1])) &&
                 (end == compiler_output.size() || !std::isalnum(static_cast<unsigned char>(compiler_output[end])));
    out += compiler_output.substr(from, at - from) + (whole ? file : kName);
  }
  return out + compiler_output.substr(from);
}

}  // namespace ptxbench::cli

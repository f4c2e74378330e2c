// `ptxbench eval DEFINITION FILE...`: the full verdict of DESIGN §4 for each candidate, as a table,
// as feedback text, or as JSON (one verdict document per line).
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"
#include "definitions/catalog.h"
#include "verdict/feedback.h"
#include "worker/evaluator.h"

namespace ptxbench::cli {
namespace {

struct EvalArgs {
  std::string definition, workload, builtin, out_dir;
  std::vector<std::string> files;
  bool json = false, feedback = false, no_sanitize = false, no_profile = false, no_time = false;
  int repeat = 1, trials = 0, device = 0;
  int64_t seed = -1;
  double sanitize_timeout = 0, call_timeout = 0;
};

std::string yes_no(const ordered_json& v) { return v.is_boolean() ? (v.get<bool>() ? "yes" : "no") : "-"; }

void print_row(const std::string& name, const ordered_json& v) {
  const auto& mech = v["target_instruction"].contains("runtime_mechanisms") ? v["target_instruction"]["runtime_mechanisms"]
                                                                            : ordered_json::object();
  auto num = [](const ordered_json& x, int precision) {
    return x.is_number() ? fmt::format("{:.{}f}", x.get<double>(), precision) : std::string("-");
  };
  fmt::print("{:<30} {:<20} {:>6} {:>6} {:>6} {:>10} {:>10} {:>8} {:>7}\n", name.substr(0, 30), v.value("status", "?"),
             yes_no(mech.value("c_gen4", ordered_json())), yes_no(mech.value("d_tma", ordered_json())),
             yes_no(v["target_instruction"]["correct"]), num(v["candidate_us"], 1), num(v["baseline_us"], 1),
             num(v["speedup"], 3), num(v["wall_seconds"], 1));
}

int run_eval(const EvalArgs& a) {
  Catalog catalog = Catalog::load(data_root());
  EvalOptions o;
  o.device = a.device;
  if (a.seed >= 0) o.seed = static_cast<uint64_t>(a.seed);
  if (a.trials > 0) o.correctness_trials = o.timing.trials = a.trials;
  o.sanitize = !a.no_sanitize;
  o.profile = !a.no_profile;
  o.measure_time = !a.no_time;
  if (a.sanitize_timeout > 0) o.sanitize_timeout_s = a.sanitize_timeout;
  if (a.call_timeout > 0) o.call_timeout_s = a.call_timeout;
  Evaluator evaluator(catalog, o);

  std::vector<std::pair<std::string, std::string>> jobs;  // (label, path); builtin has an empty path
  if (!a.builtin.empty()) {
    if (a.builtin != "cublaslt") throw InputError("cli", "unknown builtin '" + a.builtin + "' (cublaslt)");
    jobs.push_back({"builtin:cublaslt", ""});
  }
  for (const auto& f : a.files) jobs.push_back({fs::path(f).filename().string(), f});
  if (jobs.empty()) throw InputError("cli", "give at least one candidate file (or --builtin cublaslt)");
  if (!a.out_dir.empty()) fs::create_directories(a.out_dir);

  bool table = !a.json && !a.feedback;
  if (table)
    fmt::print("{:<30} {:<20} {:>6} {:>6} {:>6} {:>10} {:>10} {:>8} {:>7}\n", "candidate", "status", "wgmma", "TMA",
               "target", "time_us", "base_us", "speedup", "wall_s");
  int infra = 0;
  for (const auto& [label, path] : jobs) {
    std::string source = path.empty() ? "" : read_file(path);
    for (int r = 0; r < a.repeat; ++r) {
      Verdict v = path.empty()
                      ? evaluator.evaluate_trusted_library(a.definition, a.workload,
                                                           executable_dir().parent_path() / "lib/libptxb_builtin_cublaslt.so")
                      : evaluator.evaluate_source(a.definition, a.workload, source);
      ordered_json doc = v.to_json();
      if (v.status == Status::INFRA_ERROR) ++infra;
      if (!a.out_dir.empty()) {
        std::string stem = fs::path(label).stem().string() + (a.repeat > 1 ? "." + std::to_string(r + 1) : "");
        write_file_atomic(fs::path(a.out_dir) / (stem + ".verdict.json"), doc.dump(2));
      }
      if (a.json) fmt::print("{}\n", doc.dump());
      else if (a.feedback) fmt::print("== {} ==\n{}\n", label, render_feedback(doc));
      else print_row(label, doc);
      std::fflush(stdout);
    }
  }
  return infra ? 3 : 0;
}

}  // namespace

void register_eval(CLI::App& app, Action& action) {
  static EvalArgs a;
  auto* cmd = app.add_subcommand("eval", "evaluate candidate kernels on this host's GPU (the full verdict)");
  cmd->add_option("definition", a.definition, "definition name (ptxbench definitions list)")->required();
  cmd->add_option("files", a.files, "candidate .cu files");
  cmd->add_option("--workload", a.workload, "workload uuid or axis values like M=8192 (default: the definition's default)");
  cmd->add_flag("--json", a.json, "print each verdict as one JSON line");
  cmd->add_flag("--feedback", a.feedback, "print the feedback text a model would see");
  cmd->add_option("--out", a.out_dir, "also write each verdict to DIR/<file>.verdict.json");
  cmd->add_option("--repeat", a.repeat, "evaluate each file N times (measurement spread)")->check(CLI::PositiveNumber);
  cmd->add_option("--seed", a.seed, "input seed (default: random, recorded in the verdict)");
  cmd->add_option("--trials", a.trials, "correctness and timing trials (default 3)");
  cmd->add_option("--device", a.device, "CUDA device index");
  cmd->add_flag("--no-sanitize", a.no_sanitize, "skip compute-sanitizer (recorded in the verdict)");
  cmd->add_flag("--no-profile", a.no_profile, "skip runtime SASS counts (no target-instruction verdict)");
  cmd->add_flag("--no-time", a.no_time, "skip timing");
  cmd->add_option("--sanitize-timeout", a.sanitize_timeout, "seconds per compute-sanitizer run (default 120)");
  cmd->add_option("--call-timeout", a.call_timeout, "seconds per correctness call (default 30)");
  cmd->add_option("--builtin", a.builtin, "evaluate a trusted builtin instead of files: cublaslt (A/A self-test)");
  cmd->callback([&action] { action = [] { return run_eval(a); }; });
}

}  // namespace ptxbench::cli

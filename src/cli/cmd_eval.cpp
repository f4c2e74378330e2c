// `ptxbench eval DEFINITION FILE...`: the full verdict of docs/design.md §4 for each candidate.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/eval_args.h"
#include "cli/output_path.h"
#include "common/error.h"
#include "common/fs.h"
#include "compile/solution.h"
#include "definitions/catalog.h"
#include "definitions/workload_selection.h"
#include "evaluator/workload_sweep.h"
#include "service/service_client.h"

namespace ptxbench::cli {
namespace {

struct Args {
  std::string definition, builtin, service, token_file;
  std::vector<std::string> files;
  EvalArgs eval;
  std::string workloads;  ///< --workloads: a sweep ("all" or a list); empty: one workload
  bool stop_at_failure = false;
};

// What a table row cannot say, on stderr: why an evaluation failed on our side (for every
// INFRA_ERROR, whatever the output format), and in the table's format nvcc's errors, naming the
// user's file rather than the compile stage's "candidate.cu". Returns whether it was INFRA_ERROR.
bool explain(const std::string& label, const std::string& file, const Verdict& v, const EvalArgs& a) {
  if (print_infra_reason(label, v)) return true;
  const auto& compile = v.stages.compile;
  if (!a.json && !a.feedback && v.status == Status::COMPILE_ERROR && compile && compile->build && !compile->build->log.empty())
    fmt::print(stderr, "{}\n", name_user_file(compile->build->log, file.empty() ? label : file));
  return false;
}

// The service request for candidate file `f` at the workload --workload names (default: none).
EvalRequest request_of(const Args& a, const std::string& f) {
  CandidateFile file = read_candidate_file(f);  // .cu, .py, or a FlashInfer-Bench Solution (.json)
  if (file.solution) require_solution_definition(*file.solution, a.definition, f);
  EvalRequest r;
  r.definition = a.definition;
  r.workload = a.eval.workload;
  r.source = file.source;
  r.language = file.language;  // a .py file is a Triton candidate (docs/triton.md)
  r.sanitize = !a.eval.no_sanitize;
  r.profile = !a.eval.no_profile;
  r.measure_time = !a.eval.no_time;
  if (a.eval.seed >= 0) r.seed = static_cast<uint64_t>(a.eval.seed);
  if (a.eval.trials > 0) r.trials = a.eval.trials;
  return r;
}

std::string label_of(const Args& a, const std::string& stem, int repeat) {
  return stem + (a.eval.repeat > 1 ? "." + std::to_string(repeat + 1) : "");
}

// Through a running service: submit every file, then collect the verdicts (the GPU work of one
// overlaps the submission of the others).
int run_remote(const Args& a) {
  if (!a.builtin.empty()) throw InputError("cli", "--builtin runs locally only");
  if (a.files.empty()) throw InputError("cli", "give at least one candidate file");
  ServiceClient client(a.service, service_client_options(a.token_file));
  client.require_definitions({a.definition}, "eval");  // an unreachable service fails here, naming it
  VerdictPrinter printer(a.eval);                       // checks --out before any submission
  struct Submitted {
    std::string label, file, id;
  };
  std::vector<Submitted> submitted;
  for (int r = 0; r < a.eval.repeat; ++r)
    for (const auto& f : a.files) {
      submitted.push_back({label_of(a, fs::path(f).stem().string(), r), f, client.submit(request_of(a, f))});
    }
  int infra = 0;
  for (const auto& s : submitted) {
    Verdict verdict = client.wait_done(s.id, 3600).verdict_or_bare();
    infra += explain(s.label, s.file, verdict, a.eval) ? 1 : 0;
    printer.print(s.label, verdict);
  }
  return infra ? 3 : 0;
}

// One sweep per candidate (--workloads): a table row per workload as its verdict comes, then the
// aggregate line; --json prints the sweep document (one line); --feedback the text a model gets.
// --out DIR keeps DIR/<label>.<workload uuid>.verdict.json for each workload and
// DIR/<label>.sweep.json; `--out -` prints the sweep documents on stdout (the table goes to stderr).
class SweepPrinter {
 public:
  explicit SweepPrinter(const EvalArgs& a) : m_args(a) {  // checks --out before any work
    if (is_stdout(a.out_dir)) {
      if (a.json) throw InputError("cli", "--json and --out - both print the sweeps on stdout: give one");
      m_human = stderr;
    } else if (!a.out_dir.empty()) {
      prepare_output_dir("--out", a.out_dir);
    }
  }
  void begin(const std::string& label, const std::string& definition, std::size_t workloads) const {
    if (!table()) return;
    fmt::print(m_human, "== {}: {} over {} workload{} ==\n{}", label, definition, workloads, workloads == 1 ? "" : "s",
               sweep_table_header());
    std::fflush(m_human);
  }
  void row(const SweepEntry& e) const {
    if (!table()) return;
    fmt::print(m_human, "{}", sweep_table_row(e));
    std::fflush(m_human);
  }
  void end(const std::string& label, const SweepVerdict& s) const {
    ordered_json document = s.to_json();
    if (is_stdout(m_args.out_dir)) {
      fmt::print("{}\n", document.dump());
    } else if (!m_args.out_dir.empty()) {
      fs::path dir(m_args.out_dir);
      for (const auto& e : s.entries)
        if (e.verdict) write_file_atomic(dir / (label + "." + e.workload_uuid + ".verdict.json"), e.verdict->to_json().dump(2));
      write_file_atomic(dir / (label + ".sweep.json"), document.dump(2));
    }
    if (m_args.json) fmt::print("{}\n", document.dump());
    else if (m_args.feedback) fmt::print(m_human, "== {} ==\n{}\n", label, render_sweep_feedback(s));
    else fmt::print(m_human, "{}\n", sweep_summary(s));
    std::fflush(stdout);
    std::fflush(m_human);
  }

 private:
  [[nodiscard]] bool table() const { return !m_args.json && !m_args.feedback; }
  const EvalArgs& m_args;
  std::FILE* m_human = stdout;
};

// explain() for a sweep: every INFRA_ERROR workload's reason, and nvcc's errors once (the same
// build fails at every workload). Returns whether the sweep is INFRA_ERROR.
bool explain_sweep(const std::string& label, const std::string& file, const SweepVerdict& s, const EvalArgs& a) {
  bool compile_told = false;
  for (const auto& e : s.entries) {
    if (!e.verdict) continue;
    const Verdict& v = *e.verdict;
    if (print_infra_reason(label + "@" + e.workload_label, v) || compile_told) continue;
    const auto& compile = v.stages.compile;
    if (!a.json && !a.feedback && v.status == Status::COMPILE_ERROR && compile && compile->build && !compile->build->log.empty()) {
      fmt::print(stderr, "{}\n", name_user_file(compile->build->log, file.empty() ? label : file));
      compile_told = true;
    }
  }
  return s.status == Status::INFRA_ERROR;
}

// --workloads through a service: every workload of every file is submitted first (the GPUs work
// on them together), then each sweep is collected in order and aggregated here.
int run_remote_sweeps(const Args& a, const Definition& def, const std::vector<const Workload*>& workloads) {
  if (!a.builtin.empty()) throw InputError("cli", "--builtin runs locally only");
  if (a.stop_at_failure) throw InputError("cli", "--stop-at-failure runs locally only (a service gets every workload at once)");
  if (a.files.empty()) throw InputError("cli", "give at least one candidate file");
  ServiceClient client(a.service, service_client_options(a.token_file));
  client.require_definitions({a.definition}, "eval");
  SweepPrinter printer(a.eval);
  struct Submitted {
    std::string label, file;
    std::vector<std::string> ids;  ///< one per workload
  };
  std::vector<Submitted> submitted;
  for (int r = 0; r < a.eval.repeat; ++r)
    for (const auto& f : a.files) {
      EvalRequest request = request_of(a, f);
      Submitted s{label_of(a, fs::path(f).stem().string(), r), f, {}};
      for (const Workload* w : workloads) {
        request.workload = w->uuid;
        s.ids.push_back(client.submit(request));
      }
      submitted.push_back(std::move(s));
    }
  int infra = 0;
  for (const auto& s : submitted) {
    printer.begin(s.label, def.name, workloads.size());
    std::vector<SweepEntry> entries;
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      Verdict v = client.wait_done(s.ids[i], 3600).verdict_or_bare();
      entries.push_back(sweep_entry(def, *workloads[i], std::move(v)));
      printer.row(entries.back());
    }
    SweepVerdict sweep = aggregate_sweep(def.name, std::move(entries));
    infra += explain_sweep(s.label, s.file, sweep, a.eval) ? 1 : 0;
    printer.end(s.label, sweep);
  }
  return infra ? 3 : 0;
}

int run_sweeps(const Args& a) {
  WorkloadSelection selection = parse_workload_selection(a.workloads);
  Catalog catalog = Catalog::load(data_root());
  const Definition& def = catalog.definition(a.definition);
  // Every name is resolved before any work: an unknown workload is a usage error, not a verdict.
  std::vector<const Workload*> workloads = select_workloads(catalog, a.definition, selection);
  if (!a.service.empty()) return run_remote_sweeps(a, def, workloads);
  if (!a.token_file.empty()) throw InputError("cli", "--token-file is for --service");
  if (!a.builtin.empty() && a.builtin != "cublaslt")
    throw InputError("cli", "unknown builtin '" + a.builtin + "' (cublaslt)");
  if (a.builtin.empty() && a.files.empty()) throw InputError("cli", "give at least one candidate file (or --builtin cublaslt)");
  SweepPrinter printer(a.eval);
  Evaluator evaluator(catalog, to_eval_options(a.eval));
  int infra = 0;
  auto sweep = [&](const std::string& label, const std::string& file, const SweepCandidate& candidate) {
    printer.begin(label, def.name, workloads.size());
    SweepOptions options;
    options.stop_at_failure = a.stop_at_failure;
    options.on_entry = [&printer](const SweepEntry& e) { printer.row(e); };
    SweepVerdict s = evaluate_sweep(evaluator, def, workloads, candidate, options);
    infra += explain_sweep(label, file, s, a.eval) ? 1 : 0;
    printer.end(label, s);
  };
  for (int r = 0; r < a.eval.repeat; ++r) {
    if (!a.builtin.empty())
      sweep(label_of(a, "builtin_" + a.builtin, r), "",
            {"", CandidateLanguage::cuda, executable_dir().parent_path() / "lib/libptxb_builtin_cublaslt.so"});
    for (const auto& f : a.files) {
      CandidateFile file = read_candidate_file(f);
      if (file.solution) require_solution_definition(*file.solution, a.definition, f);
      sweep(label_of(a, fs::path(f).stem().string(), r), f, {file.source, file.language, {}});
    }
  }
  return infra ? 3 : 0;
}

int run_eval(const Args& a) {
  if (!a.workloads.empty()) return run_sweeps(a);
  if (!a.service.empty()) return run_remote(a);
  if (!a.token_file.empty()) throw InputError("cli", "--token-file is for --service");
  if (!a.builtin.empty() && a.builtin != "cublaslt")
    throw InputError("cli", "unknown builtin '" + a.builtin + "' (cublaslt)");
  if (a.builtin.empty() && a.files.empty()) throw InputError("cli", "give at least one candidate file (or --builtin cublaslt)");
  VerdictPrinter printer(a.eval);  // checks --out before any work
  Catalog catalog = Catalog::load(data_root());
  Evaluator evaluator(catalog, to_eval_options(a.eval));
  int infra = 0;
  auto report = [&](const std::string& label, const std::string& file, const Verdict& v) {
    infra += explain(label, file, v, a.eval) ? 1 : 0;
    printer.print(label, v);
  };
  for (int r = 0; r < a.eval.repeat; ++r) {
    std::string suffix = a.eval.repeat > 1 ? "." + std::to_string(r + 1) : "";
    if (!a.builtin.empty())
      report("builtin_" + a.builtin + suffix, "",
             evaluator.evaluate_trusted_library(a.definition, a.eval.workload,
                                                executable_dir().parent_path() / "lib/libptxb_builtin_cublaslt.so"));
    for (const auto& f : a.files) {
      CandidateFile file = read_candidate_file(f);  // .cu, .py, or a FlashInfer-Bench Solution (.json)
      if (file.solution) require_solution_definition(*file.solution, a.definition, f);
      report(fs::path(f).stem().string() + suffix, f,
             evaluator.evaluate_source(a.definition, a.eval.workload, file.source, std::nullopt, file.language));
    }
  }
  return infra ? 3 : 0;
}

}  // namespace

void register_eval(CLI::App& app, Action& action) {
  static Args a;
  auto* cmd = app.add_subcommand("eval", "evaluate candidate kernels on this host's GPU (the full verdict)");
  cmd->add_option("definition", a.definition, "definition name (ptxbench definitions list)")->required();
  cmd->add_option("files", a.files,
                  "candidate files: .cu (CUDA), .py (Triton, docs/triton.md), .json (a FlashInfer-Bench Solution)");
  cmd->add_option("--builtin", a.builtin, "evaluate a trusted builtin instead of files: cublaslt (A/A self-test)");
  cmd->add_option("--service", a.service, "evaluate through a running service, e.g. http://127.0.0.1:8742");
  add_token_file_option(cmd, a.token_file);
  add_eval_options(cmd, a.eval);
  auto* workloads = cmd->add_option("--workloads", a.workloads,
                                    "evaluate each candidate over a sweep: all (every workload of the definition) or a "
                                    "comma-separated list of uuids or axis values like M=70,M=8192; a table row per "
                                    "workload and the aggregate (PASSED only if PASSED at every workload; geometric-mean "
                                    "and worst speedup); --json prints the sweep document, --out DIR also keeps DIR/<name>.sweep.json");
  workloads->excludes(cmd->get_option("--workload"));
  cmd->add_flag("--stop-at-failure", a.stop_at_failure,
                "with --workloads: leave the workloads after the first failing one unevaluated (default: evaluate every workload)")
      ->needs(workloads);
  cmd->footer("The verdict and its stages: docs/verdict.md; workload sweeps: docs/verdict.md, \"Workload sweeps\". Exit 3\n"
              "when a verdict is INFRA_ERROR (a sweep: at any workload; its reason goes to stderr, one line each) or the\n"
              "service cannot be reached. In the table, nvcc's errors go to stderr.");
  cmd->callback([&action] { action = [] { return run_eval(a); }; });
}

}  // namespace ptxbench::cli

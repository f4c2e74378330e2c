// `ptxbench eval DEFINITION FILE...`: the full verdict of DESIGN §4 for each candidate.
#include "cli/commands.h"
#include "cli/eval_args.h"
#include "common/error.h"
#include "common/fs.h"
#include "definitions/catalog.h"
#include "service/service_client.h"

namespace ptxbench::cli {
namespace {

struct Args {
  std::string definition, builtin, service, token_file;
  std::vector<std::string> files;
  EvalArgs eval;
};

// Through a running service: submit every file, then collect the verdicts (the GPU work of one
// overlaps the submission of the others).
int run_remote(const Args& a) {
  if (!a.builtin.empty()) throw InputError("cli", "--builtin runs locally only");
  if (a.files.empty()) throw InputError("cli", "give at least one candidate file");
  ServiceClient client(a.service, service_client_options(a.token_file));
  EvalOptions defaults;
  std::vector<std::pair<std::string, std::string>> submitted;
  for (int r = 0; r < a.eval.repeat; ++r)
    for (const auto& f : a.files) {
      ordered_json options = {{"sanitize", !a.eval.no_sanitize}, {"profile", !a.eval.no_profile}, {"time", !a.eval.no_time}};
      if (a.eval.seed >= 0) options["seed"] = a.eval.seed;
      if (a.eval.trials > 0) options["trials"] = a.eval.trials;
      ordered_json body = {{"definition", a.definition}, {"source", read_file(f)}, {"options", options}};
      // A .py file is a Triton candidate (docs/triton.md); the service takes "language" beside "source".
      if (language_of_path(f) == CandidateLanguage::triton) body["language"] = "triton";
      if (!a.eval.workload.empty()) body["workload"] = a.eval.workload;
      std::string label = fs::path(f).stem().string() + (a.eval.repeat > 1 ? "." + std::to_string(r + 1) : "");
      submitted.push_back({label, client.submit(body)});
    }
  VerdictPrinter printer(a.eval);
  int infra = 0;
  for (const auto& [label, id] : submitted) {
    ordered_json task = client.wait_done(id, 3600);
    if (task.value("status", "") == "INFRA_ERROR") ++infra;
    printer.print(label, task["verdict"]);
  }
  return infra ? 3 : 0;
}

int run_eval(const Args& a) {
  if (!a.service.empty()) return run_remote(a);
  if (!a.token_file.empty()) throw InputError("cli", "--token-file is for --service");
  Catalog catalog = Catalog::load(data_root());
  Evaluator evaluator(catalog, to_eval_options(a.eval));
  if (!a.builtin.empty() && a.builtin != "cublaslt")
    throw InputError("cli", "unknown builtin '" + a.builtin + "' (cublaslt)");
  if (a.builtin.empty() && a.files.empty()) throw InputError("cli", "give at least one candidate file (or --builtin cublaslt)");
  VerdictPrinter printer(a.eval);
  int infra = 0;
  auto report = [&](const std::string& label, const Verdict& v) {
    if (v.status == Status::INFRA_ERROR) ++infra;
    printer.print(label, v.to_json());
  };
  for (int r = 0; r < a.eval.repeat; ++r) {
    std::string suffix = a.eval.repeat > 1 ? "." + std::to_string(r + 1) : "";
    if (!a.builtin.empty())
      report("builtin_" + a.builtin + suffix,
             evaluator.evaluate_trusted_library(a.definition, a.eval.workload,
                                                executable_dir().parent_path() / "lib/libptxb_builtin_cublaslt.so"));
    for (const auto& f : a.files)
      report(fs::path(f).stem().string() + suffix,
             evaluator.evaluate_source(a.definition, a.eval.workload, read_file(f), std::nullopt, language_of_path(f)));
  }
  return infra ? 3 : 0;
}

}  // namespace

void register_eval(CLI::App& app, Action& action) {
  static Args a;
  auto* cmd = app.add_subcommand("eval", "evaluate candidate kernels on this host's GPU (the full verdict)");
  cmd->add_option("definition", a.definition, "definition name (ptxbench definitions list)")->required();
  cmd->add_option("files", a.files, "candidate files: .cu (CUDA), .py (Triton, docs/triton.md)");
  cmd->add_option("--builtin", a.builtin, "evaluate a trusted builtin instead of files: cublaslt (A/A self-test)");
  cmd->add_option("--service", a.service, "evaluate through a running service, e.g. http://127.0.0.1:8742");
  add_token_file_option(cmd, a.token_file);
  add_eval_options(cmd, a.eval);
  cmd->footer("The verdict and its stages: docs/verdict.md. Exit 3 when a verdict is INFRA_ERROR.");
  cmd->callback([&action] { action = [] { return run_eval(a); }; });
}

}  // namespace ptxbench::cli

// `ptxbench compile FILE`: the compile stage alone. A .cu file is built by nvcc and checked (no GPU
// needed); a .py file is a Triton candidate, checked statically, and on a GPU host with torch and
// Triton also built for its definition's workload as an evaluation builds it (docs/triton.md).
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/eval_args.h"
#include "common/error.h"
#include "common/fs.h"
#include "compile/compiler.h"
#include "compile/solution.h"
#include "compile/triton_check.h"
#include "definitions/catalog.h"
#include "evaluator/evaluator.h"
#include "gpu/gpu_info.h"
#include "verdict/compile_section.h"

namespace ptxbench::cli {
namespace {

void print_status(const CompileResult& r) {
  fmt::print("status: {}{}\n", to_string(r.status), r.cache_hit ? " (cached)" : "");
  if (!r.ok()) fmt::print("{}\n", r.message);
}

int compile_cuda(const std::string& file, CompileOptions o, bool json) {
  CompileResult r = Compiler(o).compile(read_candidate_file(file).source);  // a Solution .json: the file it makes
  // nvcc's output names the compile stage's candidate.cu: here it names the user's file.
  r.log = name_user_file(r.log, file);
  r.message = name_user_file(r.message, file);
  if (json) {
    ordered_json j = compile_section(r);  // as the verdict writes it
    j["language"] = to_string(CandidateLanguage::cuda);
    j["artifacts"] = r.dir.string();
    fmt::print("{}\n", j.dump(2));
  } else if (r.status == CompileStatus::compile_error && !r.log.empty()) {
    // The message repeats the log's error lines (for the feedback text): nvcc's output once, whole.
    fmt::print("status: {}{}\n{}\n\n{}\n", to_string(r.status), r.cache_hit ? " (cached)" : "",
               r.message.substr(0, r.message.find('\n')), r.log);
  } else {
    print_status(r);
    if (r.binding) fmt::print("binding: {}\n", to_string(*r.binding));
    for (const auto& k : r.ptxas.kernels)
      fmt::print("kernel {}: {} registers, {} B smem, {} B stack, {}/{} B spill st/ld\n", k.name, k.registers,
                 k.smem_bytes, k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes);
    for (const auto& w : r.ptxas.warnings) fmt::print("{}\n", w);
    if (r.ptx.instructions) {
      fmt::print("PTX: {} instructions", r.ptx.instructions);
      for (const auto& [fam, n] : r.ptx.families) fmt::print("; {} {}", fam, n);
      fmt::print("\n");
    }
    if (!r.dir.empty()) fmt::print("artifacts: {}\n", r.dir.string());
  }
  return r.ok() ? 0 : 1;
}

// Where the build pass can run (a static check that passed, a definition, Triton installed, a CUDA
// device), its outcome: Triton compiled the kernels for the workload on this GPU. Otherwise none,
// and `why` says what is missing.
std::optional<TritonBuildOnly> triton_build_here(const std::string& source, const std::string& definition,
                                                 const std::string& workload, const std::string& arch, bool checked,
                                                 bool installed, std::string& why) {
  if (!checked) why = "the static checks failed";
  else if (definition.empty()) why = "no --definition (the build pass calls run on its workload's tensors)";
  else if (!installed) why = "Triton is not installed here";
  else if (cuda_device_count() == 0) why = "no CUDA device here";
  if (!why.empty()) return std::nullopt;
  EvalOptions options;
  options.compile.arch = arch;
  Evaluator evaluator(Catalog::load(data_root()), options);
  return evaluator.build_triton_source(definition, workload, source);
}

void print_triton_build(const TritonBuildOnly& b, const std::string& arch) {
  const Verdict& v = b.verdict;
  if (!b.built) {
    fmt::print("build pass on this GPU: {}: {}\n", to_string(v.status), v.message);
    return;
  }
  fmt::print("build pass on this GPU ({}): {}\n", v.workload_label, v.stages.compile ? v.stages.compile->message : "");
  if (const auto& s = v.stages.static_sass; s && s->available)
    fmt::print("static SASS of the cubins ({}): {} wgmma (HGMMA), {} TMA, {} tcgen05 instructions\n", arch, s->counts.gmma,
               s->counts.tma, s->counts.tcgen05);
  else if (s)
    fmt::print("static SASS: not available ({})\n", s->note);
}

int compile_triton(const std::string& file, TritonCheckOptions o, const std::string& definition, const std::string& workload,
                   bool json) {
  if (!definition.empty()) {
    const Definition& def = Catalog::load(data_root()).definition(definition);
    o.expected_args = static_cast<int>(def.inputs.size() + def.outputs.size());
  }
  TritonChecker checker(o);
  const std::string source = read_candidate_file(file).source;  // a Solution .json: its Python file
  TritonCheck check = checker.run(source);
  const CompileResult& r = check.result;
  const std::optional<TritonReport>& report = check.report;
  std::optional<std::string> triton = installed_triton_version(checker.options().python);
  std::string no_build;
  std::optional<TritonBuildOnly> build =
      triton_build_here(source, definition, workload, o.arch, r.ok(), triton.has_value(), no_build);
  const bool ok = r.ok() && (!build || build->built);
  if (json) {
    ordered_json j = compile_section(r);  // as the verdict writes it
    j["language"] = to_string(CandidateLanguage::triton);
    j["python"] = checker.python().version;
    j["triton_installed"] = triton ? ordered_json(*triton) : ordered_json(nullptr);
    j["triton_check"] = report ? ordered_json(*report) : ordered_json(nullptr);
    if (build) {
      ordered_json stages = build->verdict.to_json()["stages"];
      j["triton_build"] = {{"built", build->built},
                           {"workload", build->verdict.workload_label},
                           {"compile", stages.value("compile", ordered_json(nullptr))},
                           {"static_sass", stages.value("static_sass", ordered_json(nullptr))}};
      if (!build->built) j["triton_build"]["status"] = to_string(build->verdict.status), j["triton_build"]["message"] = build->verdict.message;
    } else {
      j["triton_build"] = {{"built", false}, {"skipped", no_build}};
    }
    fmt::print("{}\n", j.dump(2));
    return ok ? 0 : 1;
  }
  print_status(r);
  fmt::print("language: triton (checked with Python {}, in {:.2f} s)\n", checker.python().version, r.seconds);
  if (report && report->entry) {
    std::string params;
    for (const auto& p : report->entry->params) params += (params.empty() ? "" : ", ") + p;
    fmt::print("entry: run({}) at line {}\n", params, report->entry->line);
  }
  if (!r.kernels.empty()) {
    std::string kernels, launched;
    for (const auto& k : r.kernels) kernels += (kernels.empty() ? "" : ", ") + k;
    for (const auto& k : report ? report->launches : std::vector<std::string>{})
      launched += (launched.empty() ? "" : ", ") + k;
    fmt::print("kernels: {}{}\n", kernels, launched.empty() ? "" : " (launched: " + launched + ")");
  }
  if (build) {
    print_triton_build(*build, o.arch);
  } else {
    if (triton)
      fmt::print("Triton {} installed here; no build pass ({})\n", *triton, no_build);
    else
      fmt::print("Triton: not installed here; the kernels are compiled for {} on the GPU host (build pass)\n", o.arch);
  }
  return ok ? 0 : 1;
}

}  // namespace

void register_compile(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("compile", "compile a candidate .cu with the fixed flags, or check a Triton .py; "
                                            "run the static checks");
  static std::string file, language = "auto", definition, workload;
  static bool json = false, no_cache = false;
  static CompileOptions o;
  cmd->add_option("file", file, "candidate source: .cu (CUDA), .py (Triton) or .json (a FlashInfer-Bench Solution)")
      ->required();
  cmd->add_option("--language", language, "auto (by extension), cuda or triton")->capture_default_str();
  cmd->add_option("--arch", o.arch, "target: sm_90a (Hopper) or sm_100a (Blackwell)")->capture_default_str();
  auto* timeout = cmd->add_option("--timeout", o.timeout_s, "time limit, seconds (nvcc; Triton checker: default 30)")
                      ->capture_default_str();
  cmd->add_option("--definition", definition,
                  "Triton: check that run takes this definition's inputs + outputs; on a GPU host with torch and "
                  "Triton, also build the kernels for its workload");
  cmd->add_option("--workload", workload, "Triton build pass: workload uuid or axis values like M=8192 (default: the "
                                          "definition's default)");
  cmd->add_flag("--no-cache", no_cache, "ignore the compile cache");
  cmd->add_flag("--json", json, "print the compile section of a verdict as one JSON document");
  cmd->footer("Status: ok, compile_error, banned_api, abi_error or timeout; exit 1 unless ok. CUDA artifacts are\n"
              "cached, keyed by SHA-256 of nvcc's version, the flags, the ABI header and the source. A Triton file\n"
              "is parsed: its entry point, kernels, imports and host code are checked (docs/triton.md); on a GPU\n"
              "host with torch and Triton, --definition also runs the evaluation's build pass, where Triton\n"
              "compiles the kernels for the GPU (the static SASS of their cubins is printed).");
  cmd->callback([&action, timeout] {
    action = [timeout] {
      CandidateLanguage lang = language == "auto" ? language_of_path(file) : parse_candidate_language(language);
      if (language == "auto" && fs::path(file).extension() == ".json") lang = read_candidate_file(file).language;
      if (lang == CandidateLanguage::cuda) {
        if (!definition.empty() || !workload.empty())
          throw InputError("compile", "--definition and --workload apply to Triton (.py) files");
        o.use_cache = !no_cache;
        return compile_cuda(file, o, json);
      }
      TritonCheckOptions t;
      t.arch = o.arch;
      if (timeout->count() > 0) t.timeout_s = o.timeout_s;
      return compile_triton(file, t, definition, workload, json);
    };
  });
}

}  // namespace ptxbench::cli

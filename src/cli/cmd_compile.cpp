// `ptxbench compile FILE`: the compile stage alone (no GPU needed). A .cu file is built by nvcc and
// checked; a .py file is a Triton candidate, checked statically (docs/triton.md).
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"
#include "compile/compiler.h"
#include "compile/triton_check.h"
#include "definitions/catalog.h"

namespace ptxbench::cli {
namespace {

void print_status(const CompileResult& r) {
  fmt::print("status: {}{}\n", to_string(r.status), r.cache_hit ? " (cached)" : "");
  if (!r.ok()) fmt::print("{}\n", r.message);
}

int compile_cuda(const std::string& file, CompileOptions o, bool json) {
  CompileResult r = Compiler(o).compile(read_file(file));
  if (json) {
    ordered_json j = to_json(r);
    j["language"] = to_string(CandidateLanguage::cuda);
    j["artifacts"] = r.dir.string();
    fmt::print("{}\n", j.dump(2));
  } else {
    print_status(r);
    if (r.status == CompileStatus::compile_error) fmt::print("\n{}\n", r.log);
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

int compile_triton(const std::string& file, TritonCheckOptions o, const std::string& definition, bool json) {
  if (!definition.empty()) {
    const Definition& def = Catalog::load(data_root()).definition(definition);
    o.expected_args = static_cast<int>(def.inputs.size() + def.outputs.size());
  }
  TritonChecker checker(o);
  TritonCheck check = checker.run(read_file(file));
  const CompileResult& r = check.result;
  const std::optional<TritonReport>& report = check.report;
  std::optional<std::string> triton = installed_triton_version(checker.options().python);
  if (json) {
    ordered_json j = to_json(r);
    j["language"] = to_string(CandidateLanguage::triton);
    j["python"] = checker.python().version;
    j["triton_installed"] = triton ? ordered_json(*triton) : ordered_json(nullptr);
    j["triton_check"] = report ? ordered_json(*report) : ordered_json(nullptr);
    fmt::print("{}\n", j.dump(2));
    return r.ok() ? 0 : 1;
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
  fmt::print("Triton: {}; the kernels are compiled for {} at their first call on the GPU host\n",
             triton ? "version " + *triton + " installed here" : "not installed here", o.arch);
  return r.ok() ? 0 : 1;
}

}  // namespace

void register_compile(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("compile", "compile a candidate .cu with the fixed flags, or check a Triton .py; "
                                            "run the static checks");
  static std::string file, language = "auto", definition;
  static bool json = false, no_cache = false;
  static CompileOptions o;
  cmd->add_option("file", file, "candidate source: .cu (CUDA) or .py (Triton)")->required();
  cmd->add_option("--language", language, "auto (by extension), cuda or triton")->capture_default_str();
  cmd->add_option("--arch", o.arch, "target: sm_90a (Hopper) or sm_100a (Blackwell)")->capture_default_str();
  auto* timeout = cmd->add_option("--timeout", o.timeout_s, "time limit, seconds (nvcc; Triton checker: default 30)")
                      ->capture_default_str();
  cmd->add_option("--definition", definition, "Triton: check that run takes this definition's inputs + outputs");
  cmd->add_flag("--no-cache", no_cache, "ignore the compile cache");
  cmd->add_flag("--json", json, "print the compile section of a verdict as one JSON document");
  cmd->footer("Status: ok, compile_error, banned_api, abi_error or timeout; exit 1 unless ok. CUDA artifacts are\n"
              "cached, keyed by SHA-256 of nvcc's version, the flags, the ABI header and the source. A Triton file\n"
              "is parsed, never run: its entry point, kernels, imports and host code are checked (docs/triton.md);\n"
              "Triton compiles its kernels at the first call on the GPU host.");
  cmd->callback([&action, timeout] {
    action = [timeout] {
      CandidateLanguage lang = language == "auto" ? language_of_path(file) : parse_candidate_language(language);
      if (lang == CandidateLanguage::cuda) {
        if (!definition.empty()) throw InputError("compile", "--definition applies to Triton (.py) files");
        o.use_cache = !no_cache;
        return compile_cuda(file, o, json);
      }
      TritonCheckOptions t;
      t.arch = o.arch;
      if (timeout->count() > 0) t.timeout_s = o.timeout_s;
      return compile_triton(file, t, definition, json);
    };
  });
}

}  // namespace ptxbench::cli

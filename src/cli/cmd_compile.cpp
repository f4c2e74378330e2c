// `ptxbench compile FILE`: the compile stage alone (no GPU needed).
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/fs.h"
#include "compile/compiler.h"

namespace ptxbench::cli {

void register_compile(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("compile", "compile a candidate .cu with the fixed flags and run the static checks");
  static std::string file;
  static bool json = false, no_cache = false;
  static CompileOptions o;
  cmd->add_option("file", file, "candidate source")->required();
  cmd->add_option("--arch", o.arch, "target: sm_90a (Hopper) or sm_100a (Blackwell)")->capture_default_str();
  cmd->add_option("--timeout", o.timeout_s, "nvcc time limit, seconds")->capture_default_str();
  cmd->add_flag("--no-cache", no_cache, "ignore the compile cache");
  cmd->add_flag("--json", json, "print the compile section of a verdict as one JSON document");
  cmd->footer("Status: ok, compile_error, banned_api, abi_error or timeout; exit 1 unless ok. Artifacts are cached, keyed by\n"
              "SHA-256 of nvcc's version, the flags, the ABI header and the source.");
  cmd->callback([&action] {
    action = [] {
      o.use_cache = !no_cache;
      CompileResult r = Compiler(o).compile(read_file(file));
      if (json) {
        ordered_json j = to_json(r);
        j["artifacts"] = r.dir.string();
        fmt::print("{}\n", j.dump(2));
      } else {
        fmt::print("status: {}{}\n", to_string(r.status), r.cache_hit ? " (cached)" : "");
        if (!r.ok()) fmt::print("{}\n", r.message);
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
    };
  });
}

}  // namespace ptxbench::cli

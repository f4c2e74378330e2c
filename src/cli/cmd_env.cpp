// `ptxbench env`: where ptxbench reads its data and keeps its caches, and the tools, libraries and
// GPUs it finds on this host (as `python -m torch.utils.collect_env` does for PyTorch): the first
// thing to run on a new host, and to paste into a bug report. Whatever is missing is listed as
// missing; the command itself fails only on a bad option.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <regex>

#include "baseline/cudnn_graph.h"
#include "cli/commands.h"
#include "cli/host_gpu.h"
#include "common/cuda_tools.h"
#include "common/fs.h"
#include "common/json_check.h"
#include "common/subprocess.h"
#include "compile/python_runtime.h"
#include "compile/triton_check.h"

namespace ptxbench::cli {
namespace {

/// A component found (with its version and where) or missing (with why).
struct Found {
  std::string name;
  std::optional<std::string> version;  ///< unset: missing
  std::string where;                   ///< a path, or a note ("CUDA 12.4")
  std::string missing;                 ///< why it is missing
};

ordered_json to_json(const Found& f) {
  ordered_json j = {{"name", f.name}, {"found", f.version.has_value()}};
  if (f.version) {
    j["version"] = *f.version;
    if (!f.where.empty()) j["where"] = f.where;
  } else {
    j["missing"] = f.missing;
  }
  return j;
}

/// The version in a tool's --version text: "V13.0.88" (nvcc, cuobjdump), "Version 2024.3.1"
/// (ncu, compute-sanitizer), "v=7.0.15" (redis-server), else its first line.
std::string version_in(const std::string& text) {
  static const std::regex patterns[] = {std::regex(R"(\bV(\d+\.\d+\.\d+))"), std::regex(R"(\bVersion (\S+))"),
                                        std::regex(R"(\bv=(\S+))")};
  std::smatch m;
  for (const auto& p : patterns)
    if (std::regex_search(text, m, p)) return m[1].str();
  return text.substr(0, text.find('\n'));
}

Found probe_tool(const std::string& name, const std::string& path) {
  Found f{name, std::nullopt, path, ""};
  if (path.empty()) {
    f.missing = "not found";
    return f;
  }
  try {
    ProcessSpec spec;
    spec.argv = {path, "--version"};
    ProcessResult r = run_process(spec, 30);
    if (r.status.success()) f.version = version_in(r.out.text + r.err.text);
    else f.missing = path + " --version " + r.status.describe();
  } catch (const std::exception& e) {
    f.missing = path + ": " + e.what();
  }
  return f;
}

std::vector<Found> tools() {
  std::vector<Found> out;
  for (const char* name : {"nvcc", "ncu", "compute-sanitizer", "cuobjdump"}) out.push_back(probe_tool(name, find_cuda_tool(name)));
  out.push_back(probe_tool("redis-server", find_on_path("redis-server")));
  return out;
}

/// "12.4" from CUDA's 12040.
std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::vector<Found> libraries() {
  std::vector<Found> out;
  Found kernel{"NVIDIA driver", std::nullopt, "/proc/driver/nvidia/version", "no NVIDIA kernel module loaded"};
  std::ifstream in("/proc/driver/nvidia/version");
  std::smatch m;
  static const std::regex module(R"(Kernel Module\s+(\S+))");
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, module)) kernel.version = m[1].str();
  out.push_back(kernel);

  Found driver_api{"CUDA driver API", std::nullopt, "", ""};
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0) driver_api.version = cuda_version_text(v);
  else driver_api.missing = "no CUDA driver (libcuda) found";
  out.push_back(driver_api);
  Found runtime{"CUDA runtime", std::nullopt, "linked", ""};
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) runtime.version = cuda_version_text(v);
  else runtime.missing = "cudaRuntimeGetVersion failed";
  out.push_back(runtime);
  (void)cudaGetLastError();

  Found cudnn_lib{"cuDNN", std::nullopt, "linked", ""};
  try {
    cudnn_lib.version = cudnn::runtime_version();
  } catch (const std::exception& e) {
    cudnn_lib.missing = e.what();
  }
  out.push_back(cudnn_lib);
  return out;
}

/// The interpreter Triton candidates run with, and its torch and Triton.
std::vector<Found> python() {
  const std::string command = default_python_command();
  try {
    const PythonRuntime& p = python_runtime(command);
    std::vector<Found> out = {{"Python", p.version, p.executable, ""},
                              {"torch", p.torch, p.torch_cuda ? "CUDA " + *p.torch_cuda : "", p.torch_error},
                              {"Triton", p.triton, "", p.triton_error}};
    if (out[1].missing.empty()) out[1].missing = "not importable";
    if (out[2].missing.empty()) out[2].missing = "not importable";
    return out;
  } catch (const std::exception& e) {
    std::string why = e.what();
    return {{"Python", std::nullopt, "", why}, {"torch", std::nullopt, "", "no Python"}, {"Triton", std::nullopt, "", "no Python"}};
  }
}

ordered_json gpu_json(const GpuInfo& g) {
  return {{"device", g.device},       {"name", g.name},         {"arch", g.arch()},
          {"sm_count", g.sm_count},   {"memory_bytes", g.global_mem_bytes}, {"l2_bytes", g.l2_bytes}};
}

void print_group(const std::string& title, const std::vector<Found>& items) {
  fmt::print("{}:\n", title);
  for (const auto& f : items) {
    if (f.version)
      fmt::print("  {:<18} {:<14} {}\n", f.name, *f.version, f.where);
    else
      fmt::print("  {:<18} {:<14} {}\n", f.name, "missing", f.missing);
  }
}

int run_env(bool json) {
  const DataRoot& root = data_root_choice();
  const fs::path cache = cache_root() / "compile";
  std::vector<Found> tool_list = tools(), library_list = libraries(), python_list = python();
  HostGpus gpus = host_gpus();
  if (json) {
    auto list = [](const std::vector<Found>& items) {
      ordered_json a = ordered_json::array();
      for (const auto& f : items) a.push_back(to_json(f));
      return a;
    };
    ordered_json devices = ordered_json::array();
    for (const auto& g : gpus.devices) devices.push_back(gpu_json(g));
    ordered_json doc = {{"schema", "ptxbench.env"},
                        {"schema_version", 1},
                        {"ptxbench", version_line()},
                        {"data_root", {{"path", root.path.string()}, {"source", to_string(root.source)}, {"warning", root.warning}}},
                        {"build_source_dir", build_source_dir().string()},
                        {"compile_cache", cache.string()},
                        {"tools", list(tool_list)},
                        {"libraries", list(library_list)},
                        {"python", list(python_list)},
                        {"gpus", devices},
                        {"gpu_problem", gpus.problem}};
    fmt::print("{}\n", doc.dump(2));
    return kExitDone;
  }
  fmt::print("{}\n", version_line());
  fmt::print("data root:     {} ({})\n", root.path.string(), to_string(root.source));
  if (!root.warning.empty()) fmt::print("               warning: {}\n", root.warning);
  fmt::print("compile cache: {}\n", cache.string());
  print_group("tools", tool_list);
  print_group("libraries", library_list);
  print_group("python (" + default_python_command() + ", runs Triton candidates)", python_list);
  fmt::print("GPUs:\n");
  for (const auto& g : gpus.devices)
    fmt::print("  {}: {} ({}, {} SMs, {:.0f} GiB)\n", g.device, g.name, g.arch(), g.sm_count,
               static_cast<double>(g.global_mem_bytes) / (1u << 30));
  if (!gpus.problem.empty()) fmt::print("  {}\n", gpus.problem);
  return kExitDone;
}

}  // namespace

void register_env(CLI::App& app, Action& action) {
  static bool json = false;
  auto* cmd = app.add_subcommand("env", "where ptxbench reads its data, and the tools, libraries and GPUs it finds here");
  cmd->add_flag("--json", json, "print it all as one JSON document (schema ptxbench.env)");
  cmd->footer("Data root: $PTXBENCH_HOME when set; else the nearest folder at or above the working directory that\n"
              "holds definitions/ and knowledge/ (a checkout); else the source tree the binary was built from. When\n"
              "two of these differ, commands warn once on stderr naming both. Missing tools are listed, not errors.");
  cmd->callback([&action] { action = [] { return run_env(json); }; });
}

}  // namespace ptxbench::cli

#include "evaluator/stages/triton_build.h"

#include <dlfcn.h>
#include <link.h>

#include <chrono>

#include "common/clock.h"
#include "common/error.h"
#include "common/sha256.h"
#include "evaluator/runner_session.h"
#include "sandbox/host_paths.h"
#include "sandbox/sandbox.h"

namespace ptxbench {

namespace {

// The folder of the CUDA driver library this process loaded: the runner's TRITON_LIBCUDA_PATH, so
// that Triton never runs ldconfig under the filter.
std::string libcuda_dir() {
  for (const auto& dir : loaded_library_dirs())
    if (fs::exists(fs::path(dir) / "libcuda.so.1")) return dir;
  // Not loaded yet (the CUDA runtime loads the driver at its first call; seen on the H200: the
  // runner's Triton then ran ldconfig under the filter): ask the dynamic loader where it is.
  void* handle = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!handle) return "";
  std::string dir;
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    dir = fs::path(map->l_name).parent_path().string();
  ::dlclose(handle);
  return dir;
}

}  // namespace

std::unique_ptr<TritonBuilder> make_triton_builder(const EvalOptions& options) {
  TritonBuildOptions o;
  o.libcuda_dir = libcuda_dir();
  o.device = options.device;
  // The build pass runs the candidate's host code (import, run) with the GPU visible: in the
  // runner's kind of sandbox without the system-call filter (Triton starts ptxas and the C
  // compiler), writing only its artifact folder and its scratch (docs/sandbox.md).
  o.sandboxed = [sandbox = options.sandbox](const std::vector<std::string>& argv, const fs::path& work,
                                            const std::vector<fs::path>& readable, const std::vector<fs::path>& writable) {
    ProcessSpec spec = sandboxed_spec(argv, work, 1 << 20, readable, sandbox);
    SandboxPolicy p = runner_sandbox_policy(work, readable, sandbox);
    for (const auto& w : writable) p.writable.push_back(fs::absolute(w).string());
    spec.setup = std::make_shared<Sandbox>(p, spec.cwd);
    return spec;
  };
  return std::make_unique<TritonBuilder>(o);
}

TritonBuildStageOutcome triton_build(const TritonBuilder& builder, const std::string& source, const ordered_json& tensors,
                                     CompileSection compile) {
  auto start = std::chrono::steady_clock::now();
  TritonBuildResult b = builder.build(source, tensors);
  TritonBuildStageOutcome out;
  compile.wall_s = compile.wall_s.value_or(0.0) + seconds_since(start);
  CompileSection& section = out.section.emplace(std::move(compile));
  switch (b.status) {
    case TritonBuildStatus::ok: break;
    case TritonBuildStatus::compile_error:
      section.status = CompileStatus::compile_error;
      section.message = b.message;
      out.fail(Status::COMPILE_ERROR, b.message);
      return out;
    case TritonBuildStatus::timeout: out.fail(Status::TIMEOUT, b.message); return out;
    case TritonBuildStatus::runtime_error: out.fail(Status::RUNTIME_ERROR, b.message); return out;
  }
  for (const auto& name : b.kernel_names())
    if (std::string why = suspicious_triton_kernel_name(name); !why.empty()) {
      section.status = CompileStatus::abi_error;
      section.message = why;
      out.fail(Status::ABI_ERROR, why);
      return out;
    }
  section.message += "; the build pass compiled " + std::to_string(b.kernels.size()) + " kernel" +
                     (b.kernels.size() == 1 ? "" : "s") + (b.cache_hit ? " (cached)" : "") + " with Triton " + b.triton;
  // Static SASS of every cubin Triton built for the candidate; its kernels are those names.
  out.static_sass = static_sass(b.cubins());
  out.library = b.library();
  for (const auto& name : b.kernel_names()) out.kernels.insert(name);
  return out;
}

std::optional<TritonLaunchPlan> plan_triton_launch(const TritonBuilder& builder, const EvalOptions& options,
                                                   int cuda_driver, const std::string& calibration_key,
                                                   const ordered_json& tensors, int tensor_count) {
  const IntegrityPolicy& policy = options.integrity;
  if (!options.measure_time || policy.triton_launch_allowance_max_us <= 0) return std::nullopt;
  const PythonRuntime& rt = builder.runtime();
  const std::string probe = triton_launch_probe_source();
  TritonLaunchPlan plan{TritonLaunchKey{rt.version, rt.torch.value_or("?"), rt.triton.value_or("?"), cuda_driver, tensor_count,
                                        Sha256().update(probe).hex_digest()},
                        std::nullopt};
  TritonLaunchCalibration calibration(calibration_key);
  if (!wants_launch_measurement(calibration.recorded(plan.key).size(), policy.triton_launch_calibrations)) return plan;
  TritonBuildResult b = builder.build(probe, tensors);
  if (!b.ok()) throw EnvironmentError("timing", "the Triton launch probe did not build: " + b.message);
  plan.probe = std::move(b);
  return plan;
}

}  // namespace ptxbench

// The Triton shim (src/runner/triton_shim.cpp) without a GPU or torch: it loads this host's
// libpython by itself (no Python headers at build time), reports a missing torch clearly, and —
// with stand-in torch and triton modules that only record what they get — imports candidate.py,
// calls run with one view per argument, returns a Python exception's traceback (the artifact
// folder's path cut out), and turns any attempt to compile or start a process at run time into a
// "Triton cache miss" message.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"
#include "compile/python_runtime.h"
#include "compile/triton_build.h"
#include "compile/triton_check.h"
#include "ptxbench_abi.h"

using namespace ptxbench;

namespace {

const fs::path kShim = fs::path(PTXBENCH_BUILD_DIR) / "lib" / "libptxb_triton_shim.so";

// Stand-ins with the few members the shim's driver uses.
constexpr const char* kStubTorch = R"PY(
__version__ = "0.0-stub"
class _Cuda:
    def init(self): pass
    def set_device(self, d): pass
    def ExternalStream(self, ptr, device=None): return ("stream", ptr)
    def set_stream(self, s): self.current = s
cuda = _Cuda()
def device(kind, index): return (kind, index)
views = []
def from_dlpack(capsule):
    views.append(capsule)
    return "view%d" % len(views)
)PY";

struct Shim {
  void* handle = nullptr;
  int (*prepare)(int, const ptxb_tensor*, int32_t, cudaStream_t) = nullptr;
  int (*load)() = nullptr;
  int (*run)(const ptxb_tensor*, int32_t, cudaStream_t) = nullptr;
  const char* (*last_error)() = nullptr;
  const char* (*versions)() = nullptr;
};

// An artifact folder as the build pass leaves it: candidate.py, the shim as candidate.so, and
// triton_runtime.json for this host's Python (with `extra_path` first on sys.path).
Shim make_artifact(const fs::path& dir, const std::string& candidate, const std::string& extra_path,
                   const std::string& libcuda_dir = "") {
  fs::create_directories(dir / "triton_cache");
  write_file_atomic(dir / "candidate.py", candidate);
  fs::copy_file(kShim, dir / "candidate.so", fs::copy_options::overwrite_existing);
  PythonRuntime rt = python_runtime(default_python_command());
  if (!extra_path.empty()) rt.sys_path.insert(rt.sys_path.begin(), extra_path);
  write_file_atomic(dir / "triton_runtime.json", triton_runtime_config(rt, libcuda_dir).dump(2));
  Shim s;
  // A copy per folder: each is its own library (its own state), as in one runner per candidate.
  s.handle = dlopen((dir / "candidate.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(s.handle, nullptr) << dlerror();
  if (!s.handle) return s;
  s.prepare = reinterpret_cast<decltype(s.prepare)>(dlsym(s.handle, "ptxb_triton_prepare"));
  s.load = reinterpret_cast<decltype(s.load)>(dlsym(s.handle, "ptxb_triton_load"));
  s.run = reinterpret_cast<decltype(s.run)>(dlsym(s.handle, "ptxb_run"));
  s.last_error = reinterpret_cast<decltype(s.last_error)>(dlsym(s.handle, "ptxb_triton_last_error"));
  s.versions = reinterpret_cast<decltype(s.versions)>(dlsym(s.handle, "ptxb_triton_versions"));
  return s;
}

// torch as far as the build script (src/python/ptxb_triton/triton_build.py) and the shim use it.
constexpr const char* kStubTorchForBuild = R"PY(
__version__ = "0.0-stub"
class _DType:
    def __init__(self, name, fp, size):
        self.name, self.is_floating_point, self.itemsize = name, fp, size
bfloat16 = _DType("bfloat16", True, 2)
float16 = _DType("float16", True, 2)
float32 = _DType("float32", True, 4)
int32 = _DType("int32", False, 4)
int64 = _DType("int64", False, 8)
float8_e4m3fn = _DType("float8_e4m3fn", True, 1)
class _T:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype
    def to(self, dtype):
        return _T(self.shape, dtype)
class _Cuda:
    def init(self): pass
    def set_device(self, d): pass
    def current_device(self): return 0
    def synchronize(self): pass
    def get_device_capability(self, d=0): return (9, 0)
    def ExternalStream(self, ptr, device=None): return ("stream", ptr)
    def set_stream(self, s): pass
cuda = _Cuda()
def device(kind, index=0): return (kind, index)
class Generator:
    def __init__(self, device=None): pass
    def manual_seed(self, s): return self
def randn(shape, dtype=None, device=None, generator=None): return _T(shape, dtype)
def zeros(shape, dtype=None, device=None): return _T(shape, dtype)
views = []
def from_dlpack(capsule):
    views.append(capsule)
    return "view%d" % len(views)
)PY";

ProcessResult run_python(const std::vector<std::string>& argv) {
  ProcessSpec spec;
  spec.argv = argv;
  return run_process(spec, 120);
}

ptxb_tensor view(int64_t rows, int64_t cols) {
  ptxb_tensor t{};
  t.data = reinterpret_cast<void*>(0x10000);
  t.dtype = PTXB_BF16;
  t.ndim = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.stride[0] = cols;
  t.stride[1] = 1;
  return t;
}

// The shim, as in a runner, replaces the process environment (PYTHONHOME, Python's os.environ):
// the other tests of this process get theirs back.
class EnvironmentRestore {
 public:
  EnvironmentRestore() {
    for (char** e = environ; e && *e; ++e) m_saved.emplace_back(*e);
  }
  ~EnvironmentRestore() {
    clearenv();
    for (const auto& kv : m_saved) {
      auto eq = kv.find('=');
      if (eq != std::string::npos) setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
    }
  }

 private:
  std::vector<std::string> m_saved;
};

bool host_python_embeddable(std::string& why) {
  try {
    const PythonRuntime& rt = python_runtime(default_python_command());
    if (rt.libpython.empty()) why = "this host's python3 has no shared libpython";
    else if (rt.torch) why = "this host's python3 has torch (the no-torch path cannot be shown here)";
  } catch (const std::exception& e) {
    why = e.what();
  }
  return why.empty();
}

}  // namespace

TEST(TritonShim, ExportsTheCandidateAbiAndItsOwnEntryPoints) {
  ASSERT_TRUE(fs::exists(kShim)) << kShim;
  void* h = dlopen(kShim.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  for (const char* name : {"ptxb_run", "ptxb_triton_prepare", "ptxb_triton_load", "ptxb_triton_last_error", "ptxb_triton_versions"})
    EXPECT_NE(dlsym(h, name), nullptr) << name;
  // Nothing of Python is linked: libpython is opened at run time.
  EXPECT_EQ(dlsym(h, "Py_InitializeEx"), nullptr);
}

// One test, in order: the interpreter is embedded once per process, and a folder's shim keeps its
// state, as a runner does.
TEST(TritonShim, NoTorchIsAClearErrorThenACandidateRunsWithStandInModules) {
  std::string why;
  if (!host_python_embeddable(why)) GTEST_SKIP() << why;
  EnvironmentRestore restore;
  TempDir tmp("triton-shim-test");
  const cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x42);
  ptxb_tensor args[3] = {view(4, 8), view(8, 8), view(4, 8)};

  // The host's python3 without torch: prepare fails, naming torch and the import error.
  {
    Shim s = make_artifact(tmp.path() / "no_torch", "def run(A, B, C):\n    pass\n", "");
    ASSERT_TRUE(s.prepare);
    EXPECT_NE(s.prepare(0, args, 3, stream), 0);
    std::string err = s.last_error();
    EXPECT_NE(err.find("import torch failed"), std::string::npos) << err;
    EXPECT_NE(err.find("ModuleNotFoundError"), std::string::npos) << err;
    // ptxb_run fails the same way instead of crashing.
    EXPECT_NE(s.run(args, 3, stream), 0);
  }

  // Stand-in torch and triton first on sys.path.
  fs::path stubs = tmp.path() / "stubs";
  fs::create_directories(stubs / "torch");
  fs::create_directories(stubs / "triton");
  write_file_atomic(stubs / "torch" / "__init__.py", kStubTorch);
  write_file_atomic(stubs / "triton" / "__init__.py", "__version__ = \"0.0-stub\"\n");
  // Triton's driver module as far as the shim's warm-up uses it: what its libcuda lookup saw.
  fs::create_directories(stubs / "triton" / "backends" / "nvidia");
  write_file_atomic(stubs / "triton" / "backends" / "__init__.py", "");
  write_file_atomic(stubs / "triton" / "backends" / "nvidia" / "__init__.py", "");
  write_file_atomic(stubs / "triton" / "backends" / "nvidia" / "driver.py",
                    "import os\nseen = []\ndef libcuda_dirs():\n    seen.append(os.environ.get('TRITON_LIBCUDA_PATH'))\n"
                    "    return [seen[-1]]\n");

  const std::string candidate =
      "import torch\n"
      "from triton.backends.nvidia import driver\n"
      "calls = []\n"
      "def run(A, B, C):\n"
      "    calls.append((A, B, C))\n"
      "    if len(calls) == 2:\n"
      "        raise ValueError('second call saw %s; libcuda lookups %s' % (C, driver.seen))\n"
      "    if len(calls) == 3:\n"
      "        import subprocess\n"
      "        subprocess.run(['true'])\n";
  fs::path folder = tmp.path() / "stub";
  Shim s = make_artifact(folder, candidate, stubs.string(), "/opt/libcuda-of-the-config");
  ASSERT_EQ(s.prepare(0, args, 3, stream), 0) << s.last_error();
  EXPECT_NE(std::string(s.versions()).find("0.0-stub"), std::string::npos) << s.versions();
  ASSERT_EQ(s.load(), 0) << s.last_error();
  EXPECT_EQ(s.run(args, 3, stream), 0) << s.last_error();

  std::string err;
  EXPECT_NE(s.run(args, 3, stream), 0);
  err = s.last_error();
  EXPECT_NE(err.find("run raised an exception"), std::string::npos) << err;
  EXPECT_NE(err.find("ValueError: second call saw view3"), std::string::npos) << err;
  // Triton's libcuda lookup ran once, in prepare (before the filter), with the configured folder.
  EXPECT_NE(err.find("libcuda lookups ['/opt/libcuda-of-the-config']"), std::string::npos) << err;
  EXPECT_NE(err.find("File \"candidate.py\", line 7"), std::string::npos) << err;
  EXPECT_EQ(err.find(folder.string()), std::string::npos) << "the host path is cut out: " << err;

  // Starting a process (what Triton does when it must compile) is refused with a clear message.
  EXPECT_NE(s.run(args, 3, stream), 0);
  err = s.last_error();
  EXPECT_NE(err.find("Triton cache miss"), std::string::npos) << err;
  EXPECT_NE(err.find("build pass"), std::string::npos) << err;
  EXPECT_NE(err.find("TRITON_LIBCUDA_PATH: /opt/libcuda-of-the-config"), std::string::npos) << err;
}

TEST(TritonShim, ACandidateThatFailsToImportSaysWhere) {
  std::string why;
  if (!host_python_embeddable(why)) GTEST_SKIP() << why;
  EnvironmentRestore restore;
  TempDir tmp("triton-shim-test");
  fs::path stubs = tmp.path() / "stubs";
  fs::create_directories(stubs / "torch");
  fs::create_directories(stubs / "triton");
  write_file_atomic(stubs / "torch" / "__init__.py", kStubTorch);
  write_file_atomic(stubs / "triton" / "__init__.py", "__version__ = \"0.0-stub\"\n");
  Shim s = make_artifact(tmp.path() / "bad", "import torch\nBLOCK = 1 // 0\ndef run(A):\n    pass\n", stubs.string());
  ptxb_tensor a = view(2, 2);
  ASSERT_EQ(s.prepare(0, &a, 1, nullptr), 0) << s.last_error();
  EXPECT_NE(s.load(), 0);
  std::string err = s.last_error();
  EXPECT_NE(err.find("importing candidate.py failed"), std::string::npos) << err;
  EXPECT_NE(err.find("ZeroDivisionError"), std::string::npos) << err;
}

// The build pass end to end on this host, with a venv (as on the GPU host) whose stand-in torch and
// triton let the build script run: the "candidate" plays Triton by leaving a kernel's metadata and
// cubin in TRITON_CACHE_DIR, and rewrites its own file. The builder reports the kernel, leaves
// the artifact folder (the checked source, the shim, the configuration), reuses it the second
// time, tells a Triton compilation error from a bug in run, and the shim then runs the candidate
// from that folder.
TEST(TritonShim, TheBuildPassLeavesAnArtifactFolderTheShimRuns) {
  std::string why;
  if (!host_python_embeddable(why)) GTEST_SKIP() << why;
  EnvironmentRestore restore;
  TempDir tmp("triton-build-test");
  fs::path venv = tmp.path() / "venv";
  ProcessResult made = run_python({python_runtime(default_python_command()).executable, "-m", "venv", "--without-pip", venv.string()});
  if (!made.status.success()) GTEST_SKIP() << "cannot make a venv here: " << made.err.text;
  std::string python = (venv / "bin" / "python3").string();
  ProcessResult site = run_python({python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
  ASSERT_TRUE(site.status.success()) << site.err.text;
  fs::path packages = site.out.text.substr(0, site.out.text.find('\n'));
  fs::create_directories(packages / "torch");
  fs::create_directories(packages / "triton" / "compiler");
  write_file_atomic(packages / "torch" / "__init__.py", kStubTorchForBuild);
  write_file_atomic(packages / "triton" / "__init__.py", "__version__ = \"0.0-stub\"\n");
  write_file_atomic(packages / "triton" / "compiler" / "__init__.py", "");
  write_file_atomic(packages / "triton" / "compiler" / "errors.py", "class CompilationError(Exception):\n    pass\n");

  TritonBuildOptions o;
  o.python = python;
  o.cache_dir = tmp.path() / "cache";
  o.shim = kShim;
  o.script = fs::path(PTXBENCH_SOURCE_DIR) / "src/python/ptxb_triton/triton_build.py";
  o.timeout_s = 60;
  TritonBuilder builder(o);
  EXPECT_EQ(builder.runtime().torch, "0.0-stub");
  const ordered_json tensors = {{"tensors", ordered_json::array({{{"name", "A"}, {"dtype", "bfloat16"}, {"shape", {4, 8}}},
                                                                 {{"name", "C"}, {"dtype", "float32"}, {"shape", {4, 4}}, {"is_output", true}}})}};
  const std::string good =
      "import os\n"
      "import torch\n"
      "def run(A, C):\n"
      "    assert A.dtype is torch.bfloat16 and C.shape == (4, 4)\n"
      "    d = os.path.join(os.environ['TRITON_CACHE_DIR'], 'H1')\n"
      "    os.makedirs(d, exist_ok=True)\n"
      "    open(os.path.join(d, '_k.json'), 'w').write('{\"name\": \"_k\", \"num_warps\": 4, \"shared\": 0}')\n"
      "    open(os.path.join(d, '_k.cubin'), 'wb').write(b'')\n"
      "    open(os.path.join(os.path.dirname(__file__), 'candidate.py'), 'w').write('def run(*a): pass\\n')\n";
  TritonBuildResult r = builder.build(good, tensors);
  ASSERT_TRUE(r.ok()) << r.message << "\n" << r.log;
  EXPECT_FALSE(r.cache_hit);
  EXPECT_EQ(r.torch, "0.0-stub");
  EXPECT_EQ(r.kernel_names(), std::vector<std::string>{"_k"});
  EXPECT_TRUE(fs::exists(r.cubins().at(0)));
  EXPECT_EQ(read_file(r.dir / "candidate.py"), good) << "the checked source, whatever the build pass wrote";
  EXPECT_TRUE(fs::exists(r.library()));
  EXPECT_TRUE(fs::exists(r.dir / "triton_runtime.json"));
  TritonBuildResult again = builder.build(good, tensors);
  EXPECT_TRUE(again.ok());
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.kernel_names(), r.kernel_names());

  TritonBuildResult bug = builder.build("def run(A, C):\n    return 1 / 0\n", tensors);
  EXPECT_EQ(bug.status, TritonBuildStatus::runtime_error) << bug.message;
  EXPECT_NE(bug.message.find("ZeroDivisionError"), std::string::npos) << bug.message;
  EXPECT_NE(bug.message.find("File \"candidate.py\""), std::string::npos) << bug.message;
  TritonBuildResult bad = builder.build(
      "from triton.compiler.errors import CompilationError\ndef run(A, C):\n    raise CompilationError('at 3:4: bad tl.dot shapes')\n",
      tensors);
  EXPECT_EQ(bad.status, TritonBuildStatus::compile_error) << bad.message;
  EXPECT_NE(bad.message.find("bad tl.dot shapes"), std::string::npos) << bad.message;
  TritonBuildResult none = builder.build("def run(A, C):\n    pass\n", tensors);
  EXPECT_EQ(none.status, TritonBuildStatus::runtime_error);
  EXPECT_NE(none.message.find("no Triton kernel"), std::string::npos) << none.message;

  // The shim runs the built candidate from its folder with the venv's (stand-in) torch.
  void* h = dlopen(r.library().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto prepare = reinterpret_cast<int (*)(int, const ptxb_tensor*, int32_t, cudaStream_t)>(dlsym(h, "ptxb_triton_prepare"));
  auto load = reinterpret_cast<int (*)()>(dlsym(h, "ptxb_triton_load"));
  auto run = reinterpret_cast<int (*)(const ptxb_tensor*, int32_t, cudaStream_t)>(dlsym(h, "ptxb_run"));
  auto last_error = reinterpret_cast<const char* (*)()>(dlsym(h, "ptxb_triton_last_error"));
  ptxb_tensor args[2] = {view(4, 8), view(4, 4)};
  ASSERT_EQ(prepare(0, args, 2, nullptr), 0) << last_error();
  ASSERT_EQ(load(), 0) << last_error();
  // The stand-in views are strings, so the candidate's own check fails: its traceback comes back.
  EXPECT_NE(run(args, 2, nullptr), 0);
  std::string err = last_error();
  EXPECT_NE(err.find("run raised an exception"), std::string::npos) << err;
  EXPECT_NE(err.find("AttributeError"), std::string::npos) << err;
}

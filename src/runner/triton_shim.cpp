// libptxb_triton_shim.so: the trusted library that makes a Triton candidate (candidate.py) look like
// a CUDA candidate library to the runner (docs/triton.md, "The GPU side"). It exports the same
// ptxb_run as a compiled candidate, embeds CPython, imports candidate.py from its own folder and
// calls run(*inputs, *outputs) on torch tensors that view the runner's buffers (DLPack), on the
// runner's stream made torch's current one.
//
// NOTES: no Python header is needed to build it. libpython is dlopen'ed at run time (the one the
// build pass probed: triton_runtime.json in this folder names it) and the few C-API functions we
// use are looked up with dlsym; everything else (imports, tracebacks, torch, Triton) is done by a
// small trusted Python driver below, run inside the embedded interpreter. The DLPack structs are
// declared here from the DLPack 1.x specification (a stable C ABI); torch.from_dlpack accepts the
// capsule as every DLPack producer hands it over.
//
// Entry points beyond ptxb_run, for the runner (src/runner/triton_candidate.h):
//   ptxb_triton_prepare   before the sandbox's filter: start Python, import torch and Triton, warm
//                         what would start threads or processes later; no candidate code runs
//   ptxb_triton_load      under the filter: import candidate.py (its top level runs here)
//   ptxb_triton_last_error, ptxb_triton_versions
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "ptxbench_abi.h"

namespace {

// ---- DLPack (dlpack.h, v1.x; the layout is the C ABI every framework shares) ------------------
struct DLDevice {
  int32_t device_type;  // kDLCUDA = 2
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLFloat8_e4m3fn 10
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
constexpr int32_t kDLCUDA = 2;

// One allocation per view: the managed tensor and the shape and strides it points at.
struct OwnedView {
  DLManagedTensor managed;
  int64_t shape[8];
  int64_t strides[8];
};

void delete_view(DLManagedTensor* self) { delete static_cast<OwnedView*>(self->manager_ctx); }

bool dl_dtype(int32_t ptxb, DLDataType& out) {
  switch (ptxb) {
    case PTXB_BF16: out = {4, 16, 1}; return true;
    case PTXB_F16: out = {2, 16, 1}; return true;
    case PTXB_F32: out = {2, 32, 1}; return true;
    case PTXB_I32: out = {0, 32, 1}; return true;
    case PTXB_I64: out = {0, 64, 1}; return true;
    case PTXB_F8E4M3: out = {10, 8, 1}; return true;
  }
  return false;
}

// ---- the C API we use, looked up in the loaded libpython ---------------------------------------
using PyObj = void;
constexpr int kPyFileInput = 257;

struct PyApi {
  void (*Py_InitializeEx)(int) = nullptr;
  int (*Py_IsInitialized)() = nullptr;
  int (*PyGILState_Ensure)() = nullptr;
  void (*PyGILState_Release)(int) = nullptr;
  void* (*PyEval_SaveThread)() = nullptr;
  PyObj* (*PyRun_String)(const char*, int, PyObj*, PyObj*) = nullptr;
  PyObj* (*PyDict_New)() = nullptr;
  PyObj* (*PyDict_GetItemString)(PyObj*, const char*) = nullptr;  // borrowed
  int (*PyDict_SetItemString)(PyObj*, const char*, PyObj*) = nullptr;
  PyObj* (*PyEval_GetBuiltins)() = nullptr;  // borrowed
  PyObj* (*PyObject_CallObject)(PyObj*, PyObj*) = nullptr;
  PyObj* (*PyObject_Str)(PyObj*) = nullptr;
  PyObj* (*PyTuple_New)(ssize_t) = nullptr;
  int (*PyTuple_SetItem)(PyObj*, ssize_t, PyObj*) = nullptr;  // steals
  PyObj* (*PyCapsule_New)(void*, const char*, void (*)(PyObj*)) = nullptr;
  void* (*PyCapsule_GetPointer)(PyObj*, const char*) = nullptr;
  int (*PyCapsule_IsValid)(PyObj*, const char*) = nullptr;
  PyObj* (*PyLong_FromLongLong)(long long) = nullptr;
  PyObj* (*PyUnicode_FromString)(const char*) = nullptr;
  const char* (*PyUnicode_AsUTF8)(PyObj*) = nullptr;
  PyObj* (*PyErr_Occurred)() = nullptr;
  void (*PyErr_Fetch)(PyObj**, PyObj**, PyObj**) = nullptr;
  void (*PyErr_Clear)() = nullptr;
  void (*Py_DecRef)(PyObj*) = nullptr;
  PyObj* Py_None = nullptr;  // _Py_NoneStruct
};

// The trusted driver, run in the embedded interpreter. Every function returns None on success or
// the text of what failed (a traceback with the artifact folder's path cut out).
constexpr const char* kDriver = R"PY(
import importlib.util
import json
import os
import sys
import traceback

_state = {"args": None, "stream": None, "stream_obj": None, "run": None}


class TritonCacheMiss(RuntimeError):
    pass


def _text(prefix):
    text = "".join(traceback.format_exception(*sys.exc_info()))
    folder = _state.get("folder")
    if folder:
        text = text.replace(folder + os.sep, "")
    return prefix + text


def _miss_message(what):
    return ("Triton wanted to " + what + " at run time, but the evaluation runs only what the build pass "
            "compiled (it called run once on the workload's tensors, in the compile sandbox): this "
            "specialization was not among them. A kernel specialized on something that changes between "
            "calls (a scalar argument's value, a pointer's alignment, a new autotune key) misses the cache.")


def _is_cache_miss(exc):
    while exc is not None:
        if isinstance(exc, TritonCacheMiss):
            return True
        if isinstance(exc, OSError) and exc.errno in (13, 30):  # EACCES, EROFS: writing the cache
            name = str(getattr(exc, "filename", "") or "")
            if _state.get("cache_dir") and name.startswith(_state["cache_dir"]):
                return True
        exc = exc.__cause__ or exc.__context__
    return False


def _cache_summary():
    # What a miss needs to be understood: Triton's platform key and the C modules the cache holds.
    try:
        from triton.runtime import build
        key = build.platform_key()
    except Exception as e:
        key = "? (" + repr(e)[:80] + ")"
    modules = []
    cache = _state.get("cache_dir") or ""
    try:
        for entry in sorted(os.listdir(cache)):
            for name in sorted(os.listdir(os.path.join(cache, entry))):
                if name.endswith(".so"):
                    modules.append(entry[:12] + "/" + name)
    except OSError as e:
        modules.append("unreadable: " + repr(e)[:120])
    where = "?"
    try:
        import base64, hashlib
        from triton import knobs
        from triton.backends.nvidia import driver
        with open(os.path.join(os.path.dirname(os.path.realpath(driver.__file__)), "driver.c"), "rb") as fh:
            raw = fh.read()
        expected = base64.b32encode(hashlib.sha256(raw + str(key).encode()).digest()).decode()[:12]
        where = "Triton's cache dir " + str(knobs.cache.dir) + ", cuda_utils expected under " + expected + \
                ", encoding " + sys.getfilesystemencoding() + "/" + __import__("locale").getpreferredencoding(False)
    except Exception as e:
        where = "? (" + repr(e)[:120] + ")"
    return ("platform key " + str(key) + "; " + where + "; C modules in the cache: " + (", ".join(modules[:8]) or "none"))


def _guard_compilation():
    # From now on nothing may compile or start a process: the cache holds every kernel and launcher.
    import subprocess

    def _no_child(self, *args, **kwargs):
        raise TritonCacheMiss(_miss_message("start a process (" + repr(args[0] if args else "?")[:200] + ")") +
                              " (TRITON_LIBCUDA_PATH: " + (os.environ.get("TRITON_LIBCUDA_PATH") or "unset") +
                              "; " + _cache_summary() + ")")

    subprocess.Popen._execute_child = _no_child
    try:
        from triton.backends.nvidia.compiler import CUDABackend

        def _no_stages(self, *args, **kwargs):
            raise TritonCacheMiss(_miss_message("compile a kernel"))

        CUDABackend.add_stages = _no_stages
    except Exception:
        pass


def _loaded_libcuda_dir():
    # The folder of the libcuda.so.1 this process loaded (torch started the driver): what Triton's
    # own search would find with ldconfig, which it must not start under the filter.
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                path = fields[5].strip() if len(fields) == 6 else ""
                if os.path.basename(path).startswith("libcuda.so"):
                    folder = os.path.dirname(path)
                    if os.path.exists(os.path.join(folder, "libcuda.so.1")):
                        return folder
    except OSError:
        pass
    return ""


def _pin_platform_key():
    # Triton names the cache entries of its C modules (cuda_utils, launchers) by
    # platform.architecture(sys.executable), which runs `file` on the interpreter: a venv's symlink
    # here, the system's binary in the runner's embedded interpreter. Both sides pin one key
    # instead (src/compile/triton_build.py does the same), so the runner finds what was built.
    import importlib
    import platform
    import struct
    key = ",".join([platform.machine(), platform.system(), "%dbit" % (struct.calcsize("P") * 8), "ELF"])
    for name in ("triton.runtime.build", "triton.backends.nvidia.driver"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if callable(getattr(module, "platform_key", None)):
            module.platform_key = lambda: key


def _warm(name, fn, notes):
    try:
        fn()
    except Exception as e:
        notes.append(name + ": " + repr(e)[:300])


def prepare(config_text, device, folder):
    try:
        cfg = json.loads(config_text)
        _state["folder"] = folder
        _state["cache_dir"] = os.path.join(folder, "triton_cache")
        _state["device"] = device
        sys.path[:] = [p for p in cfg["sys_path"] if p]
        # The interpreter the build pass ran: Triton's cache names of its C modules hash
        # platform.architecture(sys.executable), and an embedded interpreter names the system's.
        if cfg.get("python"):
            sys.executable = cfg["python"]
        keep = {k: os.environ[k] for k in ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
                                            "HOME", "TMPDIR") if k in os.environ}
        os.environ.clear()
        os.environ.update(keep)
        os.environ.update(cfg.get("env", {}))
        os.environ["TRITON_CACHE_DIR"] = _state["cache_dir"]
    except Exception:
        return _text("the Triton runtime's configuration is unusable: ")
    try:
        import torch
    except Exception:
        return _text("import torch failed (the interpreter " + cfg.get("python", "?") + " needs torch): ")
    try:
        import triton
    except Exception:
        return _text("import triton failed: ")
    # Triton's settings, set on its knobs too: on the H200 host Triton 3.6 in this embedded
    # interpreter kept its default cache (~/.triton/cache) although TRITON_CACHE_DIR was set.
    knobs = getattr(triton, "knobs", None)
    if knobs is not None:
        try:
            knobs.cache.dir = _state["cache_dir"]
        except Exception:
            return _text("Triton's settings could not be set: ")
    _state["torch"] = torch
    _state["versions"] = {"python": "%d.%d.%d" % sys.version_info[:3], "torch": getattr(torch, "__version__", "?"),
                          "triton": getattr(triton, "__version__", "?")}
    notes = []
    cuda = getattr(torch, "cuda", None)
    _warm("torch.cuda.init", lambda: cuda.init(), notes)
    _warm("torch.cuda.set_device", lambda: cuda.set_device(device), notes)
    # Where the configuration names no libcuda folder (the evaluator could not tell), the one this
    # process loaded; then Triton's lookup runs now, before the filter (it keeps its answer).
    if not os.environ.get("TRITON_LIBCUDA_PATH"):
        found = _loaded_libcuda_dir()
        if found:
            os.environ["TRITON_LIBCUDA_PATH"] = found
    if knobs is not None and os.environ.get("TRITON_LIBCUDA_PATH"):
        _warm("Triton's libcuda setting", lambda: setattr(knobs.nvidia, "libcuda_path", os.environ["TRITON_LIBCUDA_PATH"]), notes)

    # Triton's cached host lookups that start processes (ldconfig; `file` on the interpreter for the
    # platform key of its C modules' cache names): run now, before the filter, with the same answers
    # as in the build pass, so that the first call finds them.
    _warm("the platform key", _pin_platform_key, notes)
    import importlib
    for module, names in (("triton.runtime.build", ("platform_key",)),
                          ("triton.backends.nvidia.driver", ("platform_key", "libcuda_dirs", "library_dirs"))):
        try:
            m = importlib.import_module(module)
        except ImportError:
            continue
        for name in names:
            if callable(getattr(m, name, None)):
                _warm(module + "." + name, getattr(m, name), notes)

    # Triton's driver is not started here: it loads cuda_utils from the candidate's cache folder,
    # which the candidate's build pass could write, so it starts at the first call, under the
    # filter (TRITON_LIBCUDA_PATH in the configuration spares it ldconfig). What Triton runs once
    # per process from its own files is run now: `ptxas --version` (part of every cache key).
    def _ptxas():
        major, minor = cuda.get_device_capability(device)
        from triton.backends.nvidia import compiler
        try:
            compiler.get_ptxas_version(major * 10 + minor)
        except TypeError:
            compiler.get_ptxas_version()

    _warm("ptxas version", _ptxas, notes)
    _guard_compilation()
    if notes:
        sys.stderr.write("ptxb triton shim: warm-up notes: " + "; ".join(notes) + "\n")
    return None


def versions():
    return json.dumps(_state.get("versions", {}))


def load():
    try:
        path = os.path.join(_state["folder"], "candidate.py")
        spec = importlib.util.spec_from_file_location("ptxb_candidate", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["ptxb_candidate"] = module
        spec.loader.exec_module(module)
    except Exception:
        if _is_cache_miss(sys.exc_info()[1]):
            return _text("Triton cache miss while importing candidate.py: ")
        return _text("importing candidate.py failed: ")
    run = getattr(module, "run", None)
    if not callable(run):
        return "candidate.py defines no function run(*inputs, *outputs)"
    _state["run"] = run
    return None


def set_stream(stream):
    try:
        if _state["stream"] != stream:
            torch = _state["torch"]
            _state["stream_obj"] = torch.cuda.ExternalStream(stream, device=torch.device("cuda", _state["device"]))
            _state["stream"] = stream
        return None
    except Exception:
        return _text("cannot make the runner's stream torch's current stream: ")


def set_args(capsules):
    try:
        torch = _state["torch"]
        _state["args"] = tuple(torch.from_dlpack(c) for c in capsules)
        return None
    except Exception:
        return _text("cannot view the arguments as torch tensors: ")


def call():
    run = _state["run"]
    if run is None:
        return "candidate.py is not loaded"
    try:
        _state["torch"].cuda.set_stream(_state["stream_obj"])
        run(*_state["args"])
        return None
    except BaseException:
        if _is_cache_miss(sys.exc_info()[1]):
            return _text("Triton cache miss: ")
        return _text("run raised an exception:\n")
)PY";

class Shim {
 public:
  static Shim& get() {
    static Shim s;
    return s;
  }
  std::mutex mutex;
  std::string last_error;
  std::string versions = "{}";
  bool prepared = false;
  bool loaded = false;
  int device = 0;

  int prepare(int dev, const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
    if (prepared) return 0;
    device = dev;
    std::string folder = own_folder();
    std::string config;
    if (!read_text(folder + "/triton_runtime.json", config)) return fail("cannot read " + folder + "/triton_runtime.json");
    std::string libpython = json_string_field(config, "libpython");
    std::string home = json_string_field(config, "python_home");
    if (libpython.empty()) return fail("triton_runtime.json names no libpython");
    if (!load_python(libpython, home)) return -1;
    int gil = api.PyGILState_Ensure();
    int rc = bootstrap();
    if (rc == 0) {
      PyObj* cfg_text = api.PyUnicode_FromString(config.c_str());
      rc = call_driver("prepare", {cfg_text, api.PyLong_FromLongLong(dev), api.PyUnicode_FromString(folder.c_str())});
    }
    if (rc == 0) {
      PyObj* v = call_raw("versions", {});
      if (v && api.PyUnicode_AsUTF8) {
        const char* s = api.PyUnicode_AsUTF8(v);
        if (s) versions = s;
      }
      if (v) api.Py_DecRef(v);
      if (api.PyErr_Occurred()) api.PyErr_Clear();
    }
    if (rc == 0 && args && nargs > 0) rc = bind(args, nargs, stream);
    api.PyGILState_Release(gil);
    if (rc == 0) prepared = true;
    return rc;
  }

  int load() {
    if (!prepared) return fail("ptxb_triton_load before ptxb_triton_prepare");
    if (loaded) return 0;
    int gil = api.PyGILState_Ensure();
    int rc = call_driver("load", {});
    api.PyGILState_Release(gil);
    if (rc == 0) loaded = true;
    return rc;
  }

  int run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
    if (!prepared) {
      int rc = prepare(device, args, nargs, stream);
      if (rc != 0) return rc;
    }
    if (!loaded) {
      int rc = load();
      if (rc != 0) return rc;
    }
    int gil = api.PyGILState_Ensure();
    int rc = bind(args, nargs, stream);
    if (rc == 0) rc = call_driver("call", {});
    api.PyGILState_Release(gil);
    return rc;
  }

 private:
  PyApi api;
  void* m_python = nullptr;
  PyObj* m_globals = nullptr;
  std::vector<ptxb_tensor> m_bound;
  cudaStream_t m_bound_stream = nullptr;
  bool m_have_stream = false;
  bool m_have_args = false;

  int fail(const std::string& message) {
    last_error = message;
    return -1;
  }

  static std::string own_folder() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&delete_view), &info) && info.dli_fname) {
      std::string path = info.dli_fname;
      auto slash = path.rfind('/');
      return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
    }
    return ".";
  }

  static bool read_text(const std::string& path, std::string& out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream s;
    s << in.rdbuf();
    out = s.str();
    return true;
  }

  // The two plain string fields C++ needs before Python runs; Python reads the whole document.
  // The writer (src/compile/triton_build.cpp) puts them on lines of their own, unescaped paths.
  static std::string json_string_field(const std::string& doc, const std::string& key) {
    std::string needle = "\"" + key + "\": \"";
    auto at = doc.find(needle);
    if (at == std::string::npos) return "";
    at += needle.size();
    auto end = doc.find('"', at);
    return end == std::string::npos ? "" : doc.substr(at, end - at);
  }

  template <typename F>
  bool sym(F& slot, const char* name) {
    slot = reinterpret_cast<F>(dlsym(m_python, name));
    if (!slot) last_error = std::string("libpython lacks ") + name;
    return slot != nullptr;
  }

  bool load_python(const std::string& libpython, const std::string& home) {
    if (m_python) return true;
    // RTLD_GLOBAL: extension modules (torch._C, Triton's) resolve the C API from the global scope.
    m_python = dlopen(libpython.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!m_python) {
      const char* e = dlerror();
      fail("cannot load " + libpython + ": " + (e ? e : "?"));
      return false;
    }
    bool ok = sym(api.Py_InitializeEx, "Py_InitializeEx") && sym(api.Py_IsInitialized, "Py_IsInitialized") &&
              sym(api.PyGILState_Ensure, "PyGILState_Ensure") && sym(api.PyGILState_Release, "PyGILState_Release") &&
              sym(api.PyEval_SaveThread, "PyEval_SaveThread") && sym(api.PyRun_String, "PyRun_String") &&
              sym(api.PyDict_New, "PyDict_New") && sym(api.PyDict_GetItemString, "PyDict_GetItemString") &&
              sym(api.PyDict_SetItemString, "PyDict_SetItemString") && sym(api.PyEval_GetBuiltins, "PyEval_GetBuiltins") &&
              sym(api.PyObject_CallObject, "PyObject_CallObject") && sym(api.PyObject_Str, "PyObject_Str") &&
              sym(api.PyTuple_New, "PyTuple_New") && sym(api.PyTuple_SetItem, "PyTuple_SetItem") &&
              sym(api.PyCapsule_New, "PyCapsule_New") && sym(api.PyCapsule_GetPointer, "PyCapsule_GetPointer") &&
              sym(api.PyCapsule_IsValid, "PyCapsule_IsValid") && sym(api.PyLong_FromLongLong, "PyLong_FromLongLong") &&
              sym(api.PyUnicode_FromString, "PyUnicode_FromString") && sym(api.PyUnicode_AsUTF8, "PyUnicode_AsUTF8") &&
              sym(api.PyErr_Occurred, "PyErr_Occurred") && sym(api.PyErr_Fetch, "PyErr_Fetch") &&
              sym(api.PyErr_Clear, "PyErr_Clear") && sym(api.Py_DecRef, "Py_DecRef");
    api.Py_None = dlsym(m_python, "_Py_NoneStruct");
    if (!ok || !api.Py_None) {
      if (ok) fail("libpython lacks _Py_NoneStruct");
      return false;
    }
    if (!api.Py_IsInitialized()) {
      // The standard library of the interpreter the build pass used; nothing from the user's
      // environment (PYTHONPATH, user site) gets in.
      if (!home.empty()) setenv("PYTHONHOME", home.c_str(), 1);
      setenv("PYTHONNOUSERSITE", "1", 1);
      setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
      unsetenv("PYTHONPATH");
      unsetenv("PYTHONSTARTUP");
      api.Py_InitializeEx(0);  // 0: our signal handlers stay ours
      if (!api.Py_IsInitialized()) {
        fail("Py_InitializeEx failed");
        return false;
      }
      api.PyEval_SaveThread();  // release the GIL: every entry takes it with PyGILState_Ensure
    }
    return true;
  }

  std::string fetch_error() {
    PyObj *type = nullptr, *value = nullptr, *tb = nullptr;
    api.PyErr_Fetch(&type, &value, &tb);
    std::string text = "a Python error";
    if (value) {
      PyObj* s = api.PyObject_Str(value);
      if (s) {
        const char* c = api.PyUnicode_AsUTF8(s);
        if (c) text = c;
        api.Py_DecRef(s);
      }
    }
    for (PyObj* o : {type, value, tb})
      if (o) api.Py_DecRef(o);
    if (api.PyErr_Occurred()) api.PyErr_Clear();
    return text;
  }

  int bootstrap() {
    if (m_globals) return 0;
    m_globals = api.PyDict_New();
    api.PyDict_SetItemString(m_globals, "__builtins__", api.PyEval_GetBuiltins());
    api.PyDict_SetItemString(m_globals, "__name__", api.PyUnicode_FromString("_ptxb_triton_driver"));
    PyObj* r = api.PyRun_String(kDriver, kPyFileInput, m_globals, m_globals);
    if (!r) return fail("the shim's Python driver failed to start: " + fetch_error());
    api.Py_DecRef(r);
    return 0;
  }

  // Calls a driver function; steals `args`. Returns its result (new reference) or nullptr.
  PyObj* call_raw(const char* name, std::vector<PyObj*> args) {
    PyObj* fn = api.PyDict_GetItemString(m_globals, name);
    PyObj* tuple = api.PyTuple_New(static_cast<ssize_t>(args.size()));
    for (std::size_t i = 0; i < args.size(); ++i) api.PyTuple_SetItem(tuple, static_cast<ssize_t>(i), args[i]);
    PyObj* r = fn ? api.PyObject_CallObject(fn, tuple) : nullptr;
    api.Py_DecRef(tuple);
    return r;
  }

  // A driver function returns None or the text of what failed.
  int call_driver(const char* name, std::vector<PyObj*> args) {
    PyObj* r = call_raw(name, std::move(args));
    if (!r) return fail(std::string("the shim's driver failed in ") + name + ": " + fetch_error());
    int rc = 0;
    if (r != api.Py_None) {
      const char* text = api.PyUnicode_AsUTF8(r);
      rc = fail(text ? text : "unknown failure");
      if (!text) api.PyErr_Clear();
    }
    api.Py_DecRef(r);
    return rc;
  }

  static void capsule_destructor(PyObj* capsule) {
    // Still named "dltensor": nobody took ownership, so the view is ours to free. torch renames a
    // consumed capsule "used_dltensor" and calls the deleter itself when its tensor dies.
    Shim& s = get();
    if (s.api.PyCapsule_IsValid(capsule, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(s.api.PyCapsule_GetPointer(capsule, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    } else if (s.api.PyErr_Occurred()) {
      s.api.PyErr_Clear();
    }
  }

  static bool same(const ptxb_tensor& a, const ptxb_tensor& b) {
    if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim) return false;
    for (int i = 0; i < a.ndim && i < 8; ++i)
      if (a.shape[i] != b.shape[i] || a.stride[i] != b.stride[i]) return false;
    return true;
  }

  // Views the arguments as torch tensors and the stream as torch's stream; both are kept while
  // the runner passes the same buffers (it always does), so a call costs one Python call.
  int bind(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
    if (!m_have_stream || stream != m_bound_stream) {
      PyObj* ptr = api.PyLong_FromLongLong(static_cast<long long>(reinterpret_cast<intptr_t>(stream)));
      if (int rc = call_driver("set_stream", {ptr}); rc != 0) return rc;
      m_bound_stream = stream;
      m_have_stream = true;
    }
    bool unchanged = m_have_args && static_cast<int32_t>(m_bound.size()) == nargs;
    for (int32_t i = 0; unchanged && i < nargs; ++i) unchanged = same(m_bound[i], args[i]);
    if (unchanged) return 0;
    if (nargs < 0 || nargs > 64) return fail("ptxb_run got " + std::to_string(nargs) + " arguments");
    PyObj* tuple = api.PyTuple_New(nargs);
    for (int32_t i = 0; i < nargs; ++i) {
      const ptxb_tensor& t = args[i];
      auto* v = new OwnedView{};
      DLTensor& d = v->managed.dl_tensor;
      if (!dl_dtype(t.dtype, d.dtype) || t.ndim < 0 || t.ndim > 8) {
        delete v;
        api.Py_DecRef(tuple);
        return fail("argument " + std::to_string(i) + " has an unsupported dtype or rank");
      }
      d.data = t.data;
      d.device = {kDLCUDA, device};
      d.ndim = t.ndim;
      for (int k = 0; k < t.ndim; ++k) {
        v->shape[k] = t.shape[k];
        v->strides[k] = t.stride[k];
      }
      d.shape = v->shape;
      d.strides = v->strides;
      d.byte_offset = 0;
      v->managed.manager_ctx = v;
      v->managed.deleter = delete_view;
      api.PyTuple_SetItem(tuple, i, api.PyCapsule_New(&v->managed, "dltensor", capsule_destructor));
    }
    if (int rc = call_driver("set_args", {tuple}); rc != 0) return rc;
    m_bound.assign(args, args + nargs);
    m_have_args = true;
    return 0;
  }
};

}  // namespace

/// Before the sandbox's filter (trusted code only): start Python, import torch and Triton, view the
/// arguments and the stream. 0, or nonzero with ptxb_triton_last_error().
PTXB_EXPORT int ptxb_triton_prepare(int device, const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  Shim& s = Shim::get();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.prepare(device, args, nargs, stream);
}

/// Imports candidate.py (its top-level code runs now). 0, or nonzero with ptxb_triton_last_error().
PTXB_EXPORT int ptxb_triton_load(void) {
  Shim& s = Shim::get();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.load();
}

/// What failed last: a Python traceback, or the shim's own message. Valid until the next call.
PTXB_EXPORT const char* ptxb_triton_last_error(void) { return Shim::get().last_error.c_str(); }

/// {"python": ..., "torch": ..., "triton": ...} as imported by ptxb_triton_prepare.
PTXB_EXPORT const char* ptxb_triton_versions(void) { return Shim::get().versions.c_str(); }

/// The candidate ABI: calls run(*inputs, *outputs). A Python exception returns kPtxbTritonRaised
/// (the traceback is ptxb_triton_last_error()).
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  Shim& s = Shim::get();
  std::lock_guard<std::mutex> lock(s.mutex);
  int rc = s.run(args, nargs, stream);
  return rc == 0 ? 0 : 1000;
}

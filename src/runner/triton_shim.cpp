// libptxb_triton_shim.so: the trusted library that makes a Triton candidate (candidate.py) look like
// a CUDA candidate library to the runner (docs/triton.md, "The GPU side"). It exports the same
// ptxb_run as a compiled candidate, embeds CPython, imports candidate.py from its own folder and
// calls run(*inputs, *outputs) on torch tensors that view the runner's buffers (DLPack), on the
// runner's stream made torch's current one.
//
// NOTES: no Python header is needed to build it. libpython is dlopen'ed at run time (the one the
// build pass probed: triton_runtime.json in this folder names it) and the few C-API functions we
// use are looked up with dlsym; everything else (imports, tracebacks, torch, Triton) is done by a
// small trusted Python driver (src/python/ptxb_triton/shim_driver.py, embedded at build time), run
// inside the embedded interpreter. The DLPack structs are
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

#include "embedded/ptxb_triton_shim_py.h"  // generated from src/python/ptxb_triton/ (src/CMakeLists.txt)
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
  PyObj* (*PyImport_AddModule)(const char*) = nullptr;  // borrowed
  PyObj* (*PyModule_GetDict)(PyObj*) = nullptr;          // borrowed
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
              sym(api.PyImport_AddModule, "PyImport_AddModule") && sym(api.PyModule_GetDict, "PyModule_GetDict") &&
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

  // Runs `text` (NUL-terminated) in `globals`; false with the error recorded when it raises.
  bool run_text(const char* what, const char* text, PyObj* globals) {
    api.PyDict_SetItemString(globals, "__builtins__", api.PyEval_GetBuiltins());
    PyObj* r = api.PyRun_String(text, kPyFileInput, globals, globals);
    if (!r) {
      fail(std::string("the shim's Python ") + what + " failed to start: " + fetch_error());
      return false;
    }
    api.Py_DecRef(r);
    return true;
  }

  int bootstrap() {
    if (m_globals) return 0;
    // The module the driver imports, registered under its package name from the embedded text
    // (sys.modules; nothing is read from disk), then the driver in a namespace of its own.
    PyObj* key = api.PyImport_AddModule("ptxb_triton.platform_key");
    if (!key) return fail("cannot create the module ptxb_triton.platform_key: " + fetch_error());
    if (!run_text("module ptxb_triton.platform_key", ptxb_shim::embedded::platform_key.data(), api.PyModule_GetDict(key)))
      return -1;
    PyObj* globals = api.PyDict_New();
    api.PyDict_SetItemString(globals, "__name__", api.PyUnicode_FromString("_ptxb_triton_driver"));
    if (!run_text("driver", ptxb_shim::embedded::shim_driver.data(), globals)) return -1;
    m_globals = globals;
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

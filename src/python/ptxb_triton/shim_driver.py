"""The trusted driver of the Triton shim (src/runner/triton_shim.cpp, docs/triton.md "The shim").

The shim embeds this module's text and runs it in the interpreter it embeds, as module
_ptxb_triton_driver, after registering ptxb_triton.platform_key; nothing here is read from disk.
Every function the shim calls returns None on success or the text of what failed (a traceback with
the artifact folder's path cut out).
"""
import importlib.util
import json
import os
import sys
import traceback

from ptxb_triton.platform_key import pin_platform_key

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
    _warm("the platform key", pin_platform_key, notes)
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

# ptxbench's Triton build pass (docs/triton.md, "The GPU side"): trusted code, run by the evaluator
# in the compile sandbox on the GPU host, that imports the candidate and calls its run() on the
# workload's shapes so that Triton compiles every kernel (and its launcher) into TRITON_CACHE_DIR.
# The runner later finds everything there and never compiles: Triton's compiler starts processes
# (ptxas, the C compiler) that the runner's system-call filter forbids.
#
#   python -I -B triton_build.py FOLDER SPEC.json [DEVICE]   (platform_key.py beside it)
#
# FOLDER holds candidate.py; the cache is FOLDER/triton_cache (TRITON_CACHE_DIR, set by the
# caller). Prints one line "PTXB-BUILD {json}" last: status ok | compile_error | runtime_error,
# message, versions, the kernels found in the cache (name, cubin, num_warps, shared).
import importlib.util
import json
import os
import sys
import traceback

REPORT = "PTXB-BUILD "
# Exceptions of Triton's compiler: the kernel does not compile (or cannot run on this GPU).
COMPILE_ERRORS = {"CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct", "PTXASError",
                  "OutOfResources", "MLIRCompilationError", "TritonError"}


def report(doc):
    sys.stdout.flush()
    sys.stdout.write("\n" + REPORT + json.dumps(doc) + "\n")
    sys.stdout.flush()


def text_of(folder):
    return "".join(traceback.format_exception(*sys.exc_info())).replace(folder + os.sep, "")


def is_compile_error(exc):
    while exc is not None:
        for cls in type(exc).__mro__:
            if cls.__module__.startswith("triton") and cls.__name__ in COMPILE_ERRORS:
                return True
        exc = exc.__cause__ or exc.__context__
    return False


def cached_kernels(cache_dir):
    kernels = []
    for root, _, files in os.walk(cache_dir):
        for f in sorted(files):
            if not f.endswith(".json") or f.startswith("__grp__"):
                continue
            stem = f[:-len(".json")]
            cubin = os.path.join(root, stem + ".cubin")
            if not os.path.isfile(cubin):
                continue
            try:
                with open(os.path.join(root, f)) as fh:
                    meta = json.load(fh)
            except Exception:
                continue
            if not isinstance(meta, dict) or "name" not in meta:
                continue
            kernels.append({"name": meta["name"], "cubin": os.path.relpath(cubin, cache_dir),
                            "num_warps": meta.get("num_warps"), "shared": meta.get("shared")})
    kernels.sort(key=lambda k: (k["name"], k["cubin"]))
    return kernels


def pin_platform_key():
    # The key the runner's shim pins too (platform_key.py beside this file). Run as a script with
    # -I, this folder is not on sys.path: the module is loaded from its file.
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "platform_key.py")
    spec = importlib.util.spec_from_file_location("ptxb_triton.platform_key", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.pin_platform_key()


def main():
    folder, spec_path = sys.argv[1], sys.argv[2]
    device_index = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    doc = {"status": "runtime_error", "message": "", "kernels": [], "python": "%d.%d.%d" % sys.version_info[:3]}
    try:
        import torch
        import triton
    except Exception:
        doc["message"] = "the build pass cannot import torch and triton:\n" + text_of(folder)
        doc["infra"] = True
        report(doc)
        return
    pin_platform_key()
    doc["torch"] = torch.__version__
    doc["triton"] = triton.__version__
    try:
        with open(spec_path) as fh:
            specs = json.load(fh)["tensors"]
        torch.cuda.set_device(device_index)
        device = torch.device("cuda", device_index)
        gen = torch.Generator(device=device)
        gen.manual_seed(20261129)
        tensors = []
        for s in specs:
            dtype = getattr(torch, s["dtype"])
            if not s.get("is_output") and dtype.is_floating_point and dtype.itemsize >= 2:
                t = torch.randn(s["shape"], dtype=torch.float32, device=device, generator=gen).to(dtype)
            else:
                t = torch.zeros(s["shape"], dtype=dtype, device=device)
            tensors.append(t)
        torch.cuda.synchronize()
    except Exception:
        doc["message"] = "the build pass could not allocate the workload's tensors:\n" + text_of(folder)
        doc["infra"] = True
        report(doc)
        return
    stage = "importing candidate.py"
    try:
        spec = importlib.util.spec_from_file_location("ptxb_candidate", os.path.join(folder, "candidate.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["ptxb_candidate"] = module
        spec.loader.exec_module(module)
        run = getattr(module, "run")
        # Twice: a kernel that only the second call launches is compiled too.
        for call in (1, 2):
            stage = "call %d of run()" % call
            run(*tensors)
            torch.cuda.synchronize()
    except BaseException as e:
        if is_compile_error(e):
            doc["status"] = "compile_error"
            doc["message"] = "Triton could not compile a kernel (" + stage + "):\n" + text_of(folder)
        else:
            doc["status"] = "runtime_error"
            doc["message"] = stage + " failed in the build pass:\n" + text_of(folder)
        doc["kernels"] = cached_kernels(os.environ["TRITON_CACHE_DIR"])
        report(doc)
        return
    doc["status"] = "ok"
    doc["message"] = "compiled by Triton at the first calls of run"
    doc["kernels"] = cached_kernels(os.environ["TRITON_CACHE_DIR"])
    if not doc["kernels"]:
        doc["status"] = "runtime_error"
        doc["message"] = "run() launched no Triton kernel in the build pass (no compiled kernel in Triton's cache)"
    report(doc)


if __name__ == "__main__":
    main()

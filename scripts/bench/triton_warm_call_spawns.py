#!/usr/bin/env python3
"""Which processes does Triton start, and which compiles does it attempt, at a warm call?

The runner imports a Triton candidate under a seccomp filter that allows no new process (docs/triton.md,
"What the H200 taught"), so a warm call must start none. Pass 1 calls a Triton candidate's `run` once
with a fresh TRITON_CACHE_DIR (it compiles). Pass 2, in a new interpreter on that cache, does what
the runner's shim does before its filter (torch start, ptxas version, Triton's cached host lookups),
then records every process Triton starts during `run` and every compile it attempts, and prints
them. "none" means the runner's filter is never hit. Needs a GPU, torch and Triton (the Python of
$PTXBENCH_PYTHON); the tensors are the GEMM's (M = 512, N = 7168, K = 5120, bf16).

    $PTXBENCH_PYTHON scripts/bench/triton_warm_call_spawns.py tests/fixtures/triton/gemm_tl_dot.py "$(mktemp -d)"
"""
import importlib.util
import os
import subprocess
import sys


def tensors(torch):
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(512, 5120, dtype=torch.bfloat16, device="cuda", generator=g)
    b = torch.randn(7168, 5120, dtype=torch.bfloat16, device="cuda", generator=g)
    return a, b, torch.empty(512, 7168, dtype=torch.bfloat16, device="cuda")


def main():
    path, cache, stage = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "driver"
    os.environ["TRITON_CACHE_DIR"] = cache
    if stage == "driver":
        subprocess.check_call([sys.executable, __file__, path, cache, "1"])
        subprocess.check_call([sys.executable, __file__, path, cache, "2"])
        return
    import torch
    torch.cuda.init()
    if stage == "2":
        import importlib as il
        from triton.backends.nvidia import compiler
        major, minor = torch.cuda.get_device_capability(0)
        try:
            compiler.get_ptxas_version(major * 10 + minor)
        except TypeError:
            compiler.get_ptxas_version()
        for module, names in (("triton.runtime.build", ("platform_key",)),
                              ("triton.backends.nvidia.driver", ("platform_key", "libcuda_dirs", "library_dirs"))):
            try:
                m = il.import_module(module)
            except ImportError:
                continue
            for name in names:
                if callable(getattr(m, name, None)):
                    getattr(m, name)()
        seen = []
        original = subprocess.Popen._execute_child

        def record(self, args, *rest, **kw):
            seen.append(repr(args)[:200])
            return original(self, args, *rest, **kw)

        subprocess.Popen._execute_child = record
        from triton.backends.nvidia.compiler import CUDABackend
        stages = CUDABackend.add_stages

        def record_stages(self, *a, **k):
            seen.append("compile (add_stages)")
            return stages(self, *a, **k)

        CUDABackend.add_stages = record_stages
    spec = importlib.util.spec_from_file_location("candidate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.run(*tensors(torch))
    torch.cuda.synchronize()
    if stage == "2":
        print("processes and compiles at the warm call:", seen if seen else "none")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyTorch's cuDNN SDPA at the evaluation shape, timed with CUDA events: the yardstick for our own
cuDNN graph-API baseline (src/baseline/mha_cudnn.cpp). One JSON line per case, in the format that
tests/gpu/baseline/test_mha_cudnn.cpp prints, so both can be compared from one device call:

  python3 scripts/bench/torch_sdpa.py                       # B4 H48 S4096 D128, causal and not
  python3 scripts/bench/torch_sdpa.py --shape 4 48 8192 128 --iters 20 --kernels

Passes: "fwd" (training forward: inputs require grad, so the LSE is produced as ours does), "bwd"
(backward only, repeated on one retained graph) and "fwd+bwd". FLOPs: forward 4*B*H*S^2*D, halved
when causal; backward 2.5x forward; fwd+bwd 3.5x. Each call is bracketed by its own events after
warm-up; the median is reported. The cuDNN backend is forced (sdpa_kernel(CUDNN_ATTENTION)), so
a shape it cannot run fails loudly instead of silently timing another backend.
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def time_calls(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)


def kernel_names(fn):
    """Names and device time of the kernels one call launches (which cuDNN engine ran)."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = []
    for e in prof.events():
        if getattr(e, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        us = getattr(e, "device_time", None)
        if us is None:
            us = getattr(e, "cuda_time", 0.0)
        kernels.append({"name": e.name[:160], "us": round(us, 1)})
    return kernels


def bench_case(b, h, s, d, causal, args, common):
    gen = torch.Generator(device="cuda").manual_seed(1234)
    shape = (b, h, s, d)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=gen).requires_grad_() for _ in range(3))
    d_o = torch.randn(shape, device="cuda", dtype=torch.bfloat16, generator=gen)
    fwd_flops = 4.0 * b * h * s * s * d / (2 if causal else 1)

    def fwd():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def fwd_bwd():
        torch.autograd.grad(fwd(), (q, k, v), d_o)

    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = fwd()  # fails here if cuDNN cannot run this shape

        def bwd():
            torch.autograd.grad(out, (q, k, v), d_o, retain_graph=True)

        cases = [("fwd", fwd, fwd_flops), ("bwd", bwd, 2.5 * fwd_flops), ("fwd+bwd", fwd_bwd, 3.5 * fwd_flops)]
        for name, fn, flops in cases:
            ms = time_calls(fn, args.iters, args.warmup)
            line = dict(common, impl="torch-cudnn-sdpa", **{"pass": name}, causal=causal, B=b, H=h, S=s, D=d,
                        dtype="bf16", ms=round(ms, 4), tflops=round(flops / (ms * 1e-3) / 1e12, 1), iters=args.iters)
            if args.kernels:
                line["kernels"] = kernel_names(fn)
            print(json.dumps(line), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", nargs=4, type=int, action="append", metavar=("B", "H", "S", "D"),
                   help="repeatable; default 4 48 4096 128")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--causal", choices=["both", "yes", "no"], default="both")
    p.add_argument("--kernels", action="store_true", help="also list the kernels of one call (torch.profiler)")
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("torch_sdpa.py: no CUDA device")
    common = {"torch": torch.__version__, "cudnn": str(torch.backends.cudnn.version()),
              "device": torch.cuda.get_device_name()}
    causal_modes = {"both": [False, True], "yes": [True], "no": [False]}[args.causal]
    for b, h, s, d in args.shape or [(4, 48, 4096, 128)]:
        for causal in causal_modes:
            bench_case(b, h, s, d, causal, args, common)


if __name__ == "__main__":
    main()

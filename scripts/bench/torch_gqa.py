#!/usr/bin/env python3
"""PyTorch's best ways to run the three held-out GQA classes, timed with CUDA events: the yardstick
for our cuDNN GQA baseline (src/baseline/gqa_cudnn.cpp). One JSON line per (definition, method):
{"definition", "workload", "torch_ms", "method", ...}.

  python3 scripts/bench/torch_gqa.py                      # stand-in layouts with the released totals
  python3 scripts/bench/torch_gqa.py --layout layouts.json --iters 50 --flex

--layout: {"<definition>": {"workload": "<uuid>", "q_lens": [...], "kv_lens": [...],
"num_pages": N}} (the workload's real sequence layout, e.g. dumped by the operator). Methods:
  varlen  torch.nn.attention.varlen.varlen_attn (FlashAttention varlen; bottom-right causal);
          paged K/V are first gathered by kv_indices (page size 1), inside the timed call
  sdpa    sequences padded to [B, H, S, D] (gather + pad timed), F.scaled_dot_product_attention
          with enable_gqa=True and a boolean mask (key padding, bottom-right causal)
  flex    (--flex) compiled flex_attention over the packed tokens with a document mask
          (BlockMask built once, like a plan; the gather is timed)
Each call is bracketed by its own events after warm-up; the median is reported.
"""
import argparse
import inspect
import json

import torch
import torch.nn.functional as F

from torch_sdpa import time_calls  # the same CUDA-event timing as the MHA comparison

D = 128
CLASSES = {  # definition: (paged, causal, Hq, Hkv, released totals: batch, total_q, total_kv, num_pages)
    "gqa_paged_decode_h24_kv8_d128_ps1": (True, False, 24, 8, (15, 15, 9625, 42784)),
    "gqa_paged_prefill_causal_h24_kv8_d128_ps1": (True, True, 24, 8, (1, 892, 892, 43676)),
    "gqa_ragged_prefill_causal_h32_kv4_d128": (False, True, 32, 4, (33, 16294, 16294, 0)),
}


def stand_in_lengths(n, total, seed):
    """n lengths >= 1 summing to total (the same generator as tests/gpu/baseline/test_gqa_cudnn.cpp)."""
    x, w = seed, []
    for _ in range(n):
        x = (x * 1664525 + 1013904223) % 2**32
        w.append(0.25 + (x >> 8) / 2**24)
    lens = [1 + int((total - n) * wi / sum(w)) for wi in w]
    lens[-1] += total - sum(lens)
    return lens


def default_layout(name):
    paged, causal, _, _, (b, tq, tkv, pages) = CLASSES[name]
    kv = stand_in_lengths(b, tkv, 1 if paged else 2)
    q = [1] * b if not causal else (kv if not paged else [tq])
    return {"workload": "stand-in (released totals)", "q_lens": q, "kv_lens": kv, "num_pages": pages}


def make_problem(name, layout):
    paged, causal, hq, hkv, _ = CLASSES[name]
    gen = torch.Generator(device="cuda").manual_seed(7)
    q_lens, kv_lens = layout["q_lens"], layout["kv_lens"]
    dev = {"device": "cuda"}
    cu_q = torch.tensor([0] + q_lens, **dev).cumsum(0).to(torch.int32)
    cu_k = torch.tensor([0] + kv_lens, **dev).cumsum(0).to(torch.int32)
    rows = layout["num_pages"] if paged else sum(kv_lens)
    p = {"paged": paged, "causal": causal, "hq": hq, "hkv": hkv, "q_lens": q_lens, "kv_lens": kv_lens,
         "cu_q": cu_q, "cu_k": cu_k, "scale": D ** -0.5,
         "q": torch.randn(sum(q_lens), hq, D, generator=gen, dtype=torch.bfloat16, **dev),
         "k": torch.randn(rows, hkv, D, generator=gen, dtype=torch.bfloat16, **dev),
         "v": torch.randn(rows, hkv, D, generator=gen, dtype=torch.bfloat16, **dev)}
    if paged:  # distinct pages, scattered: the [num_pages, 1, Hkv, D] cache seen as [num_pages, Hkv, D]
        p["kv_indices"] = torch.randperm(rows, generator=gen, **dev)[: sum(kv_lens)].to(torch.int32)
    return p


def contiguous_kv(p):
    """K and V as [total_kv, Hkv, D] (a gather of the pages for the paged classes)."""
    if not p["paged"]:
        return p["k"], p["v"]
    idx = p["kv_indices"].long()
    return p["k"].index_select(0, idx), p["v"].index_select(0, idx)


def varlen_method(p):
    from torch.nn.attention.varlen import varlen_attn

    params = inspect.signature(varlen_attn).parameters
    kw = {"scale": p["scale"]} if "scale" in params else {}
    if "enable_gqa" in params:
        kw["enable_gqa"] = True
    if p["causal"]:  # FlashAttention aligns the causal diagonal bottom-right
        kw.update({"is_causal": True} if "is_causal" in params else {"window_size": (-1, 0)})
    max_q, max_k = max(p["q_lens"]), max(p["kv_lens"])

    def call():
        k, v = contiguous_kv(p)
        return varlen_attn(p["q"], k, v, p["cu_q"], p["cu_k"], max_q, max_k, **kw)
    return call


def padded_index(lens, cu):
    """(rows of the packed tensor, valid mask) for sequences padded to max(lens)."""
    s = max(lens)
    pos = torch.arange(s, device="cuda")
    valid = pos[None, :] < torch.tensor(lens, device="cuda")[:, None]
    return (cu[:-1, None].long() + pos[None, :]).clamp(max=sum(lens) - 1), valid


def sdpa_method(p):
    q_rows, q_valid = padded_index(p["q_lens"], p["cu_q"])
    k_rows, k_valid = padded_index(p["kv_lens"], p["cu_k"])
    mask = k_valid[:, None, None, :].expand(-1, 1, q_rows.shape[1], -1)
    if p["causal"]:  # query i of a sequence sees key j iff j <= i + kv_len - q_len
        delta = (torch.tensor(p["kv_lens"], device="cuda") - torch.tensor(p["q_lens"], device="cuda"))
        i = torch.arange(q_rows.shape[1], device="cuda")[None, :, None] + delta[:, None, None]
        mask = mask & (torch.arange(k_rows.shape[1], device="cuda")[None, None, :] <= i)[:, None]
    mask = mask & q_valid[:, None, :, None]  # padded query rows see nothing (their output is dropped)
    mask = mask | ~mask.any(-1, keepdim=True)  # ...but a fully masked row would give NaN

    def call():
        k, v = contiguous_kv(p)
        qb, kb, vb = (t[r].transpose(1, 2) for t, r in ((p["q"], q_rows), (k, k_rows), (v, k_rows)))
        o = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask, scale=p["scale"], enable_gqa=True)
        return o.transpose(1, 2)[q_valid]
    return call


def flex_method(p):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    doc_q = torch.repeat_interleave(torch.arange(len(p["q_lens"]), device="cuda"), torch.tensor(p["q_lens"], device="cuda"))
    doc_k = torch.repeat_interleave(torch.arange(len(p["kv_lens"]), device="cuda"), torch.tensor(p["kv_lens"], device="cuda"))
    cu_q, cu_k = p["cu_q"].long(), p["cu_k"].long()
    delta = (cu_k[1:] - cu_k[:-1]) - (cu_q[1:] - cu_q[:-1])
    causal = p["causal"]

    def mask_mod(b, h, qi, kj):
        same = doc_q[qi] == doc_k[kj]
        if not causal:
            return same
        return same & (kj - cu_k[doc_k[kj]] <= qi - cu_q[doc_q[qi]] + delta[doc_q[qi]])

    block_mask = create_block_mask(mask_mod, None, None, len(doc_q), len(doc_k), device="cuda")
    flex = torch.compile(flex_attention)

    def call():
        k, v = contiguous_kv(p)
        q4, k4, v4 = (t.transpose(0, 1)[None] for t in (p["q"], k, v))
        return flex(q4, k4, v4, block_mask=block_mask, scale=p["scale"], enable_gqa=True)
    return call


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layout", help="JSON file of sequence layouts by definition name")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--flex", action="store_true", help="also time compiled flex_attention (slow to compile)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("torch_gqa.py: no CUDA device")
    layouts = {}
    if args.layout:
        with open(args.layout) as f:
            layouts = json.load(f)
    common = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    methods = [("varlen", varlen_method), ("sdpa", sdpa_method)] + ([("flex", flex_method)] if args.flex else [])
    for name in CLASSES:
        layout = layouts.get(name) or default_layout(name)
        p = make_problem(name, layout)
        for method, make in methods:
            line = dict(common, definition=name, workload=layout.get("workload", ""), method=method)
            try:
                line["torch_ms"] = round(time_calls(make(p), args.iters, args.warmup), 4)
            except Exception as e:  # a method this PyTorch lacks or refuses: say so, keep going
                line.update(torch_ms=None, error=f"{type(e).__name__}: {str(e)[:300]}")
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()

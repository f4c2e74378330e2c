#!/usr/bin/env python3
"""One line per verdict of `ptxbench eval --json` output (one verdict document per line): status,
candidate and baseline µs, speedup and its spread, TFLOP/s of both sides, the host bound (per-trial
overhead, the evaluation's pooled excess against what it allows, what it charged), wall time and
the start of the message. Lines that are not JSON are echoed, cut. The benchmark scripts under
scripts/bench/ print their evaluations with it.

    build/bin/ptxbench eval gemm_n7168_k5120 --builtin cublaslt --repeat 3 --no-sanitize --no-profile --json \\
        | python3 scripts/bench/summarize_verdicts.py
    python3 scripts/bench/summarize_verdicts.py bench.jsonl
"""
import json
import sys


def line(v):
    t = (v.get("stages") or {}).get("timing") or {}
    i = t.get("integrity") or {}
    trials = i.get("host_bound") or []
    overhead = [round(h.get("overhead_us", 0)) for h in trials]
    excess = [round(h.get("excess_us", 0)) for h in trials]
    charge = i.get("host_charge") or {}
    host = (f'host overhead {overhead} excess {excess} pooled {charge.get("excess_us", 0):.0f}/'
            f'{charge.get("allowed_us", 0):.0f} charged {charge.get("charged_us", 0):.0f}') if trials or charge else "host -"
    return (f'{v.get("status", "?"):<19} cand {v.get("candidate_us") or 0:9.1f} base {v.get("baseline_us") or 0:9.1f} '
            f'speedup {v.get("speedup") or 0:.4f} spread {t.get("speedup_spread") or 0:.4f} '
            f'TFLOP/s {t.get("candidate_tflops") or 0:.0f}/{t.get("baseline_tflops") or 0:.0f} {host} '
            f'wall {v.get("wall_seconds") or 0:.1f}s  {(v.get("message") or "")[:80]}')


def main(paths):
    for f in ([open(p) for p in paths] if paths else [sys.stdin]):
        for raw in f:
            try:
                v = json.loads(raw)
            except ValueError:
                print(raw.rstrip()[:200])
                continue
            print(line(v) if isinstance(v, dict) else raw.rstrip()[:200])


if __name__ == "__main__":
    main(sys.argv[1:])

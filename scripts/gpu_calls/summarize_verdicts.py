#!/usr/bin/env python3
# One line per verdict of a `ptxbench eval --json` stream: status, candidate/baseline µs, speedup, the
# host bound per trial (overhead, pooled excess/allowed, charged), the message. Used by the GPU calls.
import json, sys
for l in sys.stdin:
    try:
        v = json.loads(l)
    except Exception:
        print(l.rstrip()[:200]); continue
    t = (v.get("stages") or {}).get("timing") or {}
    i = t.get("integrity") or {}
    hb = [round(h["excess_us"]) for h in i.get("host_bound", [])]
    ov = [round(h["overhead_us"]) for h in i.get("host_bound", [])]
    hc = i.get("host_charge") or {}
    hb = f'{hc.get("excess_us", 0):.0f}/{hc.get("allowed_us", 0):.0f} charged {hc.get("charged_us", 0):.0f} trials {hb}'
    print(f'{v["status"]:<15} cand {v["candidate_us"] or 0:8.1f} base {v["baseline_us"] or 0:8.1f} speedup {v["speedup"] or 0:.4f} '
          f'overhead {ov} excess {hb} {v["message"][:60]}')

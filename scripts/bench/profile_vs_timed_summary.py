#!/usr/bin/env python3
"""Tables of the profile binding from verdict documents (scripts/bench/profile_vs_timed.sh).

  table DIR...     one row per verdict (*.verdict.json below each DIR): status, timed and profiled
                   device time and their ratio, patched and hardware GMMA/TMA counts, the binding's
                   decision, coverage and the target rules
  walltime DIR     full-evaluation wall time of on.N.json / off.N.json (binding on and off)
"""
import glob
import json
import os
import statistics
import sys


def verdicts(dirs):
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "**", "*.verdict.json"), recursive=True)):
            with open(path) as f:
                yield os.path.basename(path)[: -len(".verdict.json")], json.load(f)


def check(v):
    return (((v.get("stages") or {}).get("timing") or {}).get("integrity") or {}).get("profile_check") or {}


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def table(dirs):
    head = f"{'case':38} {'status':19} {'timed_us':>9} {'prof_us':>9} {'t/p':>6} {'sass_gmma':>11} {'hw/sass':>7} " \
           f"{'sass_tma':>9} {'hw/sass':>7} {'holds':>5} {'cov':>5} {'tgt':>3} {'strict':>6}"
    print(head)
    for name, v in verdicts(dirs):
        c = check(v)
        sg, hg, st, ht = c.get("sass_gmma"), c.get("hw_gmma"), c.get("sass_tma"), c.get("hw_tma")
        ti = v.get("target_instruction") or {}
        print(f"{name[:38]:38} {v.get('status', '?'):19} {fmt(c.get('timed_us'), '9.1f')} {fmt(c.get('profiled_us'), '9.1f')} "
              f"{fmt(c.get('time_ratio'), '6.3f')} {fmt(sg, '11d')} {fmt(hg / sg if hg is not None and sg else None, '7.4f')} "
              f"{fmt(st, '9d')} {fmt(ht / st if ht is not None and st else None, '7.3f')} "
              f"{str(c.get('holds', '-'))[:5]:>5} {fmt(ti.get('coverage'), '5.3f')} "
              f"{'y' if ti.get('correct') else 'n':>3} {'y' if ti.get('strict_correct') else 'n':>6}")
        for r in c.get("reasons", []):
            print(f"    void: {r}")


def walltime(d):
    for mode in ("on", "off"):
        walls, profiles = [], []
        for path in sorted(glob.glob(os.path.join(d, f"{mode}.*.json"))):
            with open(path) as f:
                lines = [l for l in f if l.strip()]
            if not lines:
                continue
            v = json.loads(lines[-1])
            walls.append(v.get("wall_seconds", 0.0))
            profiles.append(((v.get("stages") or {}).get("runtime_sass") or {}).get("wall_s", 0.0))
        if walls:
            print(f"binding {mode:3}: wall {statistics.mean(walls):.2f} s {walls}  runtime_sass {statistics.mean(profiles):.2f} s {profiles}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("table", "walltime"):
        sys.exit(__doc__)
    table(sys.argv[2:]) if sys.argv[1] == "table" else walltime(sys.argv[2])

#!/usr/bin/env python3
"""Compares two folders of verdicts case by case (suite_before_after.sh writes them as
SUITE/<case>.verdict.json): status before/after, speedup before/after and their ratio. Exits 1 when
a status differs or a speedup moved by more than --tolerance (default 1%)."""
import argparse
import json
import pathlib
import sys


def verdicts(root):
    out = {}
    for path in sorted(pathlib.Path(root).glob("*/*.verdict.json")):
        out[f"{path.parent.name}/{path.name[:-len('.verdict.json')]}"] = json.loads(path.read_text())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--tolerance", type=float, default=0.01)
    a = ap.parse_args()
    before, after = verdicts(a.before), verdicts(a.after)
    bad = 0
    ratios = []
    print(f"{'case':58} {'before':22} {'after':22} {'speedup before':>14} {'after':>8} {'ratio':>7}")
    for case in sorted(set(before) | set(after)):
        b, n = before.get(case, {}), after.get(case, {})
        sb, sa = b.get("status", "-"), n.get("status", "-")
        pb, pa = b.get("speedup"), n.get("speedup")
        ratio = pa / pb if pb and pa else None
        flag = ""
        if sb != sa:
            flag = "  STATUS DIFFERS"
            bad += 1
        elif ratio is not None:
            ratios.append(ratio)
            if abs(ratio - 1) > a.tolerance:
                flag = "  SPEEDUP MOVED"
                bad += 1
        fmt = lambda x: f"{x:.4f}" if x is not None else "-"
        print(f"{case:58} {sb:22} {sa:22} {fmt(pb):>14} {fmt(pa):>8} {fmt(ratio):>7}{flag}")
    if ratios:
        worst = max(ratios, key=lambda r: abs(r - 1))
        print(f"{len(ratios)} speedups compared: worst ratio {worst:.4f}; {bad} differences beyond {a.tolerance:.1%}")
    print(f"{len(set(before) | set(after))} cases, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The markdown table of scripts/bench/multihost_throughput.sh: one row per number of hosts, from
each phase's phase.json and `ptxbench suite load`'s summary (OUT/hostsN/load.jsonl.summary.json).

Rates are evaluations per minute: "steady" leaves out the first and last tenth of the verdicts
(start and drain), "overall" is all verdicts over the load's wall time. Efficiency is
rate / (hosts x rate of 1 host), for each of the two rates.

    python3 scripts/bench/multihost_summary.py /tmp/ptxbench-multihost > table.md
"""
import json
import pathlib
import sys


def load_phase(folder):
    phase = json.loads((folder / "phase.json").read_text())
    summary_file = folder / "load.jsonl.summary.json"
    phase["summary"] = json.loads(summary_file.read_text()) if summary_file.exists() else None
    return phase


def hosts_used(summary):
    """Hosts that finished work: worker names are HOST/gpuN."""
    return len({w.split("/", 1)[0] for w in summary.get("finished_by_worker", {})})


def main(out):
    phases = sorted((load_phase(p) for p in pathlib.Path(out).glob("hosts*") if (p / "phase.json").exists()),
                    key=lambda p: p["hosts"])
    if not phases:
        print(f"no phases under {out}", file=sys.stderr)
        return 1
    base = next((p for p in phases if p["hosts"] == 1 and p["summary"]), None)
    first = phases[0]
    lines = [
        f"Fake GPUs, {first['workers_per_host']} worker processes per host, {first['fake_seconds']} s per "
        f"evaluation, {first['count'] // max(1, first['workers'])} submissions and "
        f"{first['clients'] // max(1, first['workers'])} clients per worker, Redis appendfsync "
        f"{first['appendfsync']}; every host on one machine of {first['cores']} cores. "
        "Ideal rate per worker: " + f"{60.0 / float(first['fake_seconds']):.0f}/min.",
        "",
        "| hosts | workers | submissions | clients | as expected | lost | re-run | hosts used | wall s "
        "| evaluations/min (steady) | evaluations/min (overall) | efficiency (steady) | efficiency (overall) "
        "| p50 / p95 latency s | load avg after |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in phases:
        s = p["summary"]
        if not s:
            why = "did not start" if p["load_rc"] == -1 else f"load failed (exit {p['load_rc']})"
            lines.append(f"| {p['hosts']} | {p['workers']} | {p['count']} | {p['clients']} | {why} | | | | | | | | | | |")
            continue
        steady, overall = s["steady_evaluations_per_minute"], s["evaluations_per_minute"]
        eff = eff_all = "–"
        if base:
            b = base["summary"]
            if b["steady_evaluations_per_minute"] > 0:
                eff = f"{steady / (p['hosts'] * b['steady_evaluations_per_minute']):.2f}"
            if b["evaluations_per_minute"] > 0:
                eff_all = f"{overall / (p['hosts'] * b['evaluations_per_minute']):.2f}"
        lat = s.get("latency", {})
        lines.append(
            f"| {p['hosts']} | {p['workers']} | {s['submissions']} | {p['clients']} | {s['as_expected']} | {s['lost']} "
            f"| {s['rerun_by_service']} | {hosts_used(s)} | {s['wall_s']:.1f} | {steady:.0f} | {overall:.0f} | {eff} "
            f"| {eff_all} | {lat.get('p50_s', 0):.2f} / {lat.get('p95_s', 0):.2f} | {p['load1_after']} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))

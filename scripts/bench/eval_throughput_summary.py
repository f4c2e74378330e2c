#!/usr/bin/env python3
"""The numbers of scripts/bench/eval_throughput.sh (issue 37): one row per phase (workers per GPU x
cold or warm caches) from the files each phase leaves in OUT/phases/<phase>/:

    phase.json       what ran (workers, cache, submissions, clients, GPU, start-up, cut, ...)
    load.jsonl       `ptxbench suite load --out`: one record per submission (load.jsonl.partial when cut)
    verdicts.jsonl   the service's task documents with their verdicts (eval_throughput.py fetch)
    gpu_util.csv     `nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 200`

What each number means:
- evaluations/min overall: verdicts / (last verdict - first submission; a cut phase: until the cut); steady: the verdicts between
  the first and the last tenth of them, over the time between those two (fewer than 10 verdicts:
  from the first to the last one);
- p50 / p95 latency: submission to verdict, as the client saw it (nearest rank, like `suite load`);
- compile-stage p50: the same, of the verdicts the compile stage gives (COMPILE_ERROR, BANNED_API,
  ABI_ERROR): what the check lane (`serve --check-workers`) shortens;
- stage shares: each stage's wall time (`stages.<stage>.wall_s`, plus the first attempt of a stage
  that timed out on a shared GPU and ran again alone) and its wait for the GPU locks
  (`stages.<stage>.gpu_lock_wait_s`), summed over the phase's verdicts, over the summed evaluation
  wall time (`wall_seconds`); "other" is the rest (workload state, runner sessions, set-up);
- GPU busy: the mean NVML utilization (share of time a kernel ran) over the phase's samples;
- timing bound: 60 / mean timing-stage wall time per evaluation (evaluations without a timing
  stage count 0 s): the timing stage holds the GPU alone, so no number of workers gets past it;
- worker busy: summed evaluation wall time / (workers x phase wall time).

    python3 scripts/bench/eval_throughput_summary.py OUT [OUT2 ...] [--json FILE] [--md FILE]
    python3 scripts/bench/eval_throughput_summary.py --self-test
Several folders: their phases together (a run split over several GPU calls); a later folder's
phase of the same name replaces an earlier one's.
"""
import argparse
import datetime
import json
import math
import pathlib
import shutil
import sys
import tempfile

STAGES = ["compile", "static_sass", "sanitize", "correctness", "runtime_sass", "timing"]
COMPILE_STAGE = {"COMPILE_ERROR", "BANNED_API", "ABI_ERROR"}
SCHEMA = "ptxbench.eval_throughput"


def quantile(values, q):
    """Nearest rank, as src/common/stats.cpp (the load driver's p50/p95)."""
    v = sorted(values)
    rank = math.ceil(q * len(v))
    return v[max(rank, 1) - 1]


def read_jsonl(path):
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass  # a line cut by a killed writer
    return out


def gpu_samples(path, t0, t1):
    """Utilization percents of the samples within [t0, t1] (all of them when no timestamp parses)."""
    if not path.exists():
        return []
    timed, untimed = [], []
    for line in path.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 2:
            continue
        try:
            util = float(parts[-1])
        except ValueError:
            continue  # "[N/A]", a header, a cut line
        untimed.append(util)
        try:
            t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        except ValueError:
            continue
        if t0 <= t <= t1:
            timed.append(util)
    return timed if timed else untimed


def stage_times(verdict):
    """{stage: (wall_s, lock_wait_s)} of a verdict; a stage re-run alone adds its first attempt."""
    out = {}
    for name in STAGES:
        s = (verdict.get("stages") or {}).get(name)
        if not isinstance(s, dict):
            continue
        wall, wait = s.get("wall_s") or 0.0, s.get("gpu_lock_wait_s") or 0.0
        first = (s.get("gpu_alone_after_shared_timeout") or {}).get("stage") or {}
        wall += first.get("wall_s") or 0.0
        wait += first.get("gpu_lock_wait_s") or 0.0
        out[name] = (wall, wait)
    return out


def summarize_phase(folder):
    phase = json.loads((folder / "phase.json").read_text())
    row = {k: phase.get(k) for k in ("name", "workers", "cache", "submissions", "clients", "device", "gpu", "fake",
                                     "start_s", "cut", "service_restarted", "load_rc", "error",
                                     "sanitize_timeout", "call_timeout", "phase_limit_s", "check_workers")}
    row["name"] = row["name"] or folder.name
    records = read_jsonl(folder / "load.jsonl") or read_jsonl(folder / "load.jsonl.partial")
    done = [r for r in records if r.get("status") and not r.get("lost")]
    row["n"] = phase.get("submissions")
    row["finished"] = len(done)
    row["as_expected"] = sum(1 for r in done if not r.get("mismatches"))
    row["lost"] = sum(1 for r in records if r.get("lost"))
    statuses = {}
    for r in done:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    row["statuses"] = dict(sorted(statuses.items()))
    if not done:
        return row
    t0 = min(r["submitted_at"] for r in records if r.get("submitted_at") is not None)
    t1 = max(r["done_at"] for r in done)
    if phase.get("cut") and phase.get("ended_at"):
        t1 = max(t1, phase["ended_at"])  # a cut phase lasted until the cut, whatever finished before
    wall = t1 - t0
    row["wall_s"] = round(wall, 2)
    row["evals_per_min"] = round(60.0 * len(done) / wall, 2) if wall > 0 else None
    times = sorted(r["done_at"] for r in done)
    i0, i1 = len(times) // 10, len(times) - 1 - len(times) // 10
    row["evals_per_min_steady"] = round(60.0 * (i1 - i0) / (times[i1] - times[i0]), 2) if times[i1] > times[i0] else None
    latencies = [r["done_at"] - r["submitted_at"] for r in done]
    row["latency_p50_s"] = round(quantile(latencies, 0.5), 2)
    row["latency_p95_s"] = round(quantile(latencies, 0.95), 2)
    compile_stage = [r["done_at"] - r["submitted_at"] for r in done if r["status"] in COMPILE_STAGE]
    row["compile_stage_latency_p50_s"] = round(quantile(compile_stage, 0.5), 2) if compile_stage else None

    ids = {r.get("id") for r in done}
    verdicts = [t["verdict"] for t in read_jsonl(folder / "verdicts.jsonl")
                if t.get("id") in ids and isinstance(t.get("verdict"), dict)]
    row["verdicts"] = len(verdicts)
    eval_wall = sum(v.get("wall_seconds") or 0.0 for v in verdicts)
    row["eval_wall_mean_s"] = round(eval_wall / len(verdicts), 3) if verdicts else None
    walls = dict.fromkeys(STAGES, 0.0)
    waits = dict.fromkeys(STAGES, 0.0)
    for v in verdicts:
        for name, (w, q) in stage_times(v).items():
            walls[name] += w
            waits[name] += q
    if eval_wall > 0:
        row["stage_wall_share"] = {k: round(walls[k] / eval_wall, 4) for k in STAGES}
        # One worker per GPU takes no lock: its verdicts have no gpu_lock_wait_s at all.
        locked = any(isinstance(st, dict) and "gpu_lock_wait_s" in st
                     for v in verdicts for st in (v.get("stages") or {}).values())
        row["stage_lock_wait_share"] = {k: round(waits[k] / eval_wall, 4) for k in STAGES} if locked else None
        row["other_share"] = round(1.0 - (sum(walls.values()) + sum(waits.values())) / eval_wall, 4)
        row["worker_busy_share"] = round(eval_wall / (phase["workers"] * wall), 4) if wall > 0 else None
    row["stage_mean_s"] = {k: round(walls[k] / len(verdicts), 3) for k in STAGES} if verdicts else None
    row["lock_wait_mean_s"] = round(sum(waits.values()) / len(verdicts), 3) if verdicts else None
    timing_mean = walls["timing"] / len(verdicts) if verdicts else 0.0
    row["timing_mean_s"] = round(timing_mean, 3) if verdicts else None
    row["timing_bound_per_min"] = round(60.0 / timing_mean, 2) if timing_mean > 0 else None
    util = gpu_samples(folder / "gpu_util.csv", t0, t1)
    row["gpu_samples"] = len(util)
    row["gpu_busy_share"] = round(sum(util) / len(util) / 100.0, 4) if util else None
    return row


def collect(folders):
    phases = {}
    for out in folders:
        for p in sorted(pathlib.Path(out).glob("phases/*/phase.json")):
            phases[p.parent.name] = summarize_phase(p.parent)
    order = {"cold": 0, "warm": 1}
    return sorted(phases.values(), key=lambda r: (r.get("workers") or 0, str(r.get("check_workers")),
                                                  order.get(r.get("cache"), 2), r["name"]))


def fmt(x, digits=1, pct=False):
    if x is None:
        return "–"
    return f"{100 * x:.{digits}f}%" if pct else f"{x:.{digits}f}"


def markdown(rows, mix):
    lines = []
    if mix:
        counts = ", ".join(f"{k} {v}" for k, v in mix.get("counts", {}).items() if v)
        lines += [f"Mix ({mix.get('definition')}): {counts}; shares from {mix.get('source')}, "
                  f"models {', '.join(mix.get('models', []))}." + (" FAKE GPU (plumbing only)." if mix.get("fake") else ""), ""]
    lines += ["| workers | check workers | cache | GPU | done / n (as expected) | wall s | evals/min steady "
              "| evals/min overall | p50 / p95 latency s | compile-stage p50 s | GPU busy | timing bound /min "
              "| worker busy | lock wait | notes |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        notes = []
        if r.get("error"):
            notes.append(r["error"])
        if r.get("cut"):
            notes.append(f"cut at {r.get('phase_limit_s')} s")
        if r.get("service_restarted"):
            notes.append("fresh service (the cold phase was cut)")
        if r.get("cache") == "cold" and r.get("start_s") is not None:
            notes.append(f"start-up {r['start_s']:.0f} s")
        if not r.get("cut") and (r.get("load_rc") or 0) > 1:
            notes.append(f"suite load exit {r['load_rc']}")
        if r.get("lost"):
            notes.append(f"{r['lost']} lost")
        if r.get("statuses"):
            notes.append(" ".join(f"{k}:{v}" for k, v in r["statuses"].items()))
        lock = sum((r.get("stage_lock_wait_share") or {}).values()) if r.get("stage_lock_wait_share") else None
        lines.append(
            f"| {r.get('workers')} | {r.get('check_workers') if r.get('check_workers') is not None else '–'} "
            f"| {r.get('cache')} | {r.get('gpu') or '–'} | {r.get('finished', 0)} / {r.get('n')} "
            f"({r.get('as_expected', 0)}) | {fmt(r.get('wall_s'), 0)} | {fmt(r.get('evals_per_min_steady'))} "
            f"| {fmt(r.get('evals_per_min'))} | {fmt(r.get('latency_p50_s'))} / {fmt(r.get('latency_p95_s'))} "
            f"| {fmt(r.get('compile_stage_latency_p50_s'))} | {fmt(r.get('gpu_busy_share'), 0, True)} | {fmt(r.get('timing_bound_per_min'))} "
            f"| {fmt(r.get('worker_busy_share'), 0, True)} | {fmt(lock, 0, True)} | {'; '.join(notes)} |")
    lines += ["", "Share of the evaluations' wall time, per stage: wall (lock wait).", "",
              "| workers | cache | " + " | ".join(STAGES) + " | other | mean eval s | mean timing s |",
              "|---|---|" + "---|" * (len(STAGES) + 3)]
    for r in rows:
        if not r.get("stage_wall_share"):
            lines.append(f"| {r.get('workers')} | {r.get('cache')} | " + " | ".join("–" for _ in STAGES) + " | – | – | – |")
            continue
        waits = r.get("stage_lock_wait_share") or dict.fromkeys(STAGES)
        cells = [f"{fmt(r['stage_wall_share'][k], 1, True)} ({fmt(waits[k], 1, True)})" for k in STAGES]
        lines.append(f"| {r['workers']} | {r['cache']} | " + " | ".join(cells) +
                     f" | {fmt(r.get('other_share'), 1, True)} | {fmt(r.get('eval_wall_mean_s'))} | {fmt(r.get('timing_mean_s'), 2)} |")
    return "\n".join(lines) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="*", help="folders of eval_throughput.sh runs (--out)")
    p.add_argument("--json", help="write the phases as one JSON document here")
    p.add_argument("--md", help="write the Markdown tables here (they are printed too)")
    p.add_argument("--self-test", action="store_true", help="check the arithmetic on made-up phases and exit")
    a = p.parse_args(argv)
    if a.self_test:
        return self_test()
    if not a.out:
        p.error("give at least one folder")
    rows = collect(a.out)
    if not rows:
        print(f"no phases under {', '.join(a.out)}", file=sys.stderr)
        return 1
    mix = None
    for out in a.out:
        f = pathlib.Path(out) / "mix" / "mix.json"
        if f.exists():
            mix = json.loads(f.read_text())
    mix_brief = {k: mix[k] for k in ("source", "models", "definition", "fake", "status_shares", "pass_speed_shares", "counts")} if mix else None
    doc = {"schema": SCHEMA, "schema_version": 1, "mix": mix_brief, "phases": rows}
    md = markdown(rows, mix_brief)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(doc, indent=1) + "\n")
    if a.md:
        pathlib.Path(a.md).write_text(md)
    sys.stdout.write(md)
    return 0


def self_test():
    """Two made-up phases with numbers worked out by hand."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="eval-throughput-selftest-"))
    try:
        # Phase 1: 2 workers, 10 submissions at t=1000, verdicts every 10 s from t=1010. Each verdict
        # 10 s: compile 1, sanitize 2 (+0.5 wait), timing 4 (+1 wait); the last one's sanitize timed
        # out shared (first attempt 3 s, 0.5 s wait) and ran again alone.
        ph = tmp / "phases" / "w2-cold"
        ph.mkdir(parents=True)
        (ph / "phase.json").write_text(json.dumps({"name": "w2-cold", "workers": 2, "cache": "cold", "submissions": 10,
                                                   "clients": 4, "gpu": "Test GPU", "start_s": 12.0, "cut": False,
                                                   "check_workers": 1}))
        recs, tasks, util = [], [], []
        for i in range(10):
            recs.append({"index": i, "id": f"t{i}", "status": "PASSED" if i % 2 else "COMPILE_ERROR", "mismatches": [],
                         "lost": False, "submitted_at": 1000.0, "done_at": 1010.0 + 10 * i})
            sanitize = {"wall_s": 2.0, "gpu_lock_wait_s": 0.5}
            if i == 9:
                sanitize["gpu_alone_after_shared_timeout"] = {"message": "x", "stage": {"wall_s": 3.0, "gpu_lock_wait_s": 0.5}}
            tasks.append({"id": f"t{i}", "state": "done", "verdict": {"wall_seconds": 10.0 if i < 9 else 13.5, "stages": {
                "compile": {"wall_s": 1.0}, "sanitize": sanitize, "timing": {"wall_s": 4.0, "gpu_lock_wait_s": 1.0}}}})
        (ph / "load.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
        (ph / "verdicts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
        for k in range(0, 200):
            t = datetime.datetime.fromtimestamp(1000.0 + k * 0.5)
            util.append(f"{t.strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, {50 if k % 2 else 100}")
        util.append(f"{datetime.datetime.fromtimestamp(5000.0).strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, 0")  # outside
        (ph / "gpu_util.csv").write_text("\n".join(util) + "\n")
        # Phase 2: cut, only a partial load file, 3 verdicts, no verdict documents, no GPU samples.
        ph2 = tmp / "phases" / "w1-warm"
        ph2.mkdir(parents=True)
        (ph2 / "phase.json").write_text(json.dumps({"name": "w1-warm", "workers": 1, "cache": "warm", "submissions": 6,
                                                    "cut": True, "phase_limit_s": 120, "ended_at": 120.0}))
        (ph2 / "load.jsonl.partial").write_text("".join(json.dumps(
            {"id": f"u{i}", "status": "TIMEOUT", "mismatches": ["x"] if i == 0 else [], "lost": False,
             "submitted_at": 0.0, "done_at": 20.0 * (i + 1)}) + "\n" for i in range(3)) + '{"cut')
        rows = collect([tmp])
        assert [r["name"] for r in rows] == ["w1-warm", "w2-cold"], rows
        cut, r = rows
        close = lambda a, b: a is not None and abs(a - b) < 1e-3  # noqa: E731  (values are rounded)
        assert r["finished"] == 10 and r["as_expected"] == 10 and r["statuses"] == {"COMPILE_ERROR": 5, "PASSED": 5}
        assert close(r["wall_s"], 100) and close(r["evals_per_min"], 6.0), r
        assert close(r["evals_per_min_steady"], 60.0 * 7 / 70), r  # verdicts 2..9 of 10: t=1020..1090
        assert close(r["latency_p50_s"], 50) and close(r["latency_p95_s"], 100), r
        assert close(r["compile_stage_latency_p50_s"], 50), r  # the even ones: 10, 30, 50, 70, 90 s
        total = 9 * 10.0 + 13.5
        assert close(r["stage_wall_share"]["compile"], 10 / total), r
        assert close(r["stage_wall_share"]["sanitize"], (20 + 3) / total), r
        assert close(r["stage_lock_wait_share"]["sanitize"], (5 + 0.5) / total), r
        assert close(r["stage_wall_share"]["timing"], 40 / total) and close(r["stage_lock_wait_share"]["timing"], 10 / total)
        assert close(r["other_share"], 1 - (10 + 23 + 40 + 5.5 + 10) / total), r
        assert close(r["timing_mean_s"], 4.0) and close(r["timing_bound_per_min"], 15.0), r
        assert close(r["worker_busy_share"], round(total / 200, 4)), r
        assert r["gpu_samples"] == 200 and close(r["gpu_busy_share"], 0.75), r  # t=1000..1100: not the one at 5000
        assert cut["finished"] == 3 and cut["as_expected"] == 2 and close(cut["evals_per_min"], 1.5), cut  # 3 in 120 s
        assert close(cut["evals_per_min_steady"], 3.0) and cut["verdicts"] == 0 and cut["timing_bound_per_min"] is None
        assert cut["gpu_busy_share"] is None and "stage_wall_share" not in cut
        md = markdown(rows, None)
        assert "| 2 | 1 | cold | Test GPU | 10 / 10 (10) | 100 | 6.0 | 6.0 | 50.0 / 100.0 | 50.0 | 75% | 15.0 | 52% | 15% |" in md, md
        assert "| 1 | – | warm | – | 3 / 6 (2) | 120 | 3.0 | 1.5 | 40.0 / 60.0 | – | – | – | – | – | cut at 120 s; TIMEOUT:3 |" in md, md
        print("eval_throughput_summary self-test: ok")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

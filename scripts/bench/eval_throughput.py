#!/usr/bin/env python3
"""The driver side of scripts/bench/eval_throughput.sh (issue 37): the mix of submissions, the wait
for a ready service, and the verdicts fetched back from it. Standard library only.

    eval_throughput.py mix --bin build/bin --submissions 48 --out DIR [--fake]
    eval_throughput.py ready --service URL --log serve.log --workers N --pid PID [--timeout S]
    eval_throughput.py fetch --service URL --load load.jsonl --out verdicts.jsonl
    eval_throughput.py leftovers --under CACHE_DIR

The mix. Its statuses follow the original PTXBench release (github.com/zhang677/PTXBench at
491860b, benchmark/plot_viewer_v1/data/reasoning_tokens_vs_performance.csv, sha256 7345616b56f9a864…,
the file `ptxbench import ptxbench-original` reads; docs/report.md): the per-turn results of the
paper's four models on Hopper (H100), counted below. Each model weighs the same (Qwen3.6-27B has
three times Claude Opus 4.8's turns). Turns that never reached an evaluator ("Extraction error":
no code in the answer) and the unclassified "Other error" are left out; the two rare time-out
labels count as time-outs. Shares of the evaluated turns (mean over the four models):

    PASSED 36.1%   COMPILE_ERROR 18.5%   INCORRECT_NUMERICAL 18.2%   RUNTIME_ERROR 15.8%   TIMEOUT 11.3%

Passes at their speeds: the released speedups of the correct turns, split at the geometric
midpoints between the stand-ins' own speedups (0.05 SIMT, 0.77 wgmma fixture, 0.93 expert), weighed
by each model's pass share: 26% below 0.196 (SIMT-like), 65% in 0.196-0.846, 9% above.

Stand-ins (all on gemm_n7168_k5120 at its default M = 8192; the release's turns are 87% attention,
whose costs this mix does not carry): a class's submissions take its stand-ins in turn.
Every submission gets a first comment line of its own, so no two sources are equal: a fresh compile
cache misses on every one of them (as for model-written kernels), and the same mix sent again hits
on every one.
"""
import argparse
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFINITION = "gemm_n7168_k5120"

# Per-turn `correctness` counts of the release on hopper, and the speed buckets of the `Correct`
# turns (below 0.196, 0.196 to 0.846, 0.846 and above).
RELEASED_HOPPER = {
    "Claude Opus 4.8": {
        "turns": {"Correct": 404, "Numerical error": 39, "Compilation error": 7, "Runtime error": 3,
                  "Kernel Execution Timeout": 22, "Extraction error": 5},
        "pass_speeds": {"slow": 99, "mid": 249, "fast": 56}},
    "GLM-5.2": {
        "turns": {"Correct": 123, "Numerical error": 140, "Compilation error": 59, "Runtime error": 77,
                  "Kernel Execution Timeout": 76, "Extraction error": 5},
        "pass_speeds": {"slow": 46, "mid": 77, "fast": 0}},
    "Gemini 3.1 Pro": {
        "turns": {"Correct": 330, "Numerical error": 283, "Compilation error": 89, "Runtime error": 156,
                  "Kernel Execution Timeout": 125, "Extraction error": 9},
        "pass_speeds": {"slow": 74, "mid": 248, "fast": 8}},
    "Qwen3.6-27B": {
        "turns": {"Correct": 0, "Numerical error": 90, "Compilation error": 719, "Runtime error": 428,
                  "Kernel Execution Timeout": 162, "Sanitize Timeout": 1, "Profiling Service Timeout": 5,
                  "Extraction error": 23, "Other error": 12},
        "pass_speeds": {"slow": 0, "mid": 0, "fast": 0}},
}
RELEASE = ("github.com/zhang677/PTXBench 491860b, benchmark/plot_viewer_v1/data/"
           "reasoning_tokens_vs_performance.csv (sha256 7345616b56f9a864...), arch hopper")
# The release's label -> our class (None: never reached an evaluator, or unclassified).
LABEL_CLASS = {
    "Correct": "passed", "Numerical error": "numerical", "Compilation error": "compile",
    "Runtime error": "runtime", "Kernel Execution Timeout": "timeout", "Sanitize Timeout": "timeout",
    "Profiling Service Timeout": "timeout", "Extraction error": None, "Other error": None,
}
SPEED_SPLITS = {"slow": "< 0.196", "mid": "0.196 - 0.846", "fast": ">= 0.846"}

GEMM = "tests/fixtures/gemm/suite.json"
TVM_FFI = "tests/fixtures/tvm_ffi/suite.json"
EXPERT = "knowledge/hopper/experts/gemm_n7168_k5120_suite.json"
# Class -> (suite, case) stand-ins, taken in turn.
STAND_INS = {
    "pass_slow": [(GEMM, "simt_tiled_gemm"), (GEMM, "wgmma_never_taken")],        # speedup ~0.05
    "pass_mid": [(GEMM, "wgmma_tma_gemm"), (TVM_FFI, "gemm_wgmma_tvm_ffi")],       # ~0.77
    "pass_fast": [(EXPERT, "expert_gemm_n7168_k5120")],                            # ~0.93
    "numerical": [(GEMM, "wrong_result")],
    "compile": [(GEMM, "compile_error")],
    # The release's "Runtime error" held CUDA errors; an out-of-bounds access is ptxbench's
    # SANITIZER_ERROR (memcheck runs first), so one stand-in in three is one.
    "runtime": [(GEMM, "host_segfault"), (TVM_FFI, "exit_in_cuda_check"), (GEMM, "oob_write")],
    "timeout": [(GEMM, "infinite_loop")],
}
# --fake: what the fake backend is told to answer, and for how long (seconds).
FAKE = {"pass_slow": ("PASSED", 1.0, 0.05), "pass_mid": ("PASSED", 1.0, 0.77), "pass_fast": ("PASSED", 1.0, 0.93),
        "numerical": ("INCORRECT_NUMERICAL", 0.8, None), "compile": ("COMPILE_ERROR", 0.3, None),
        "runtime": ("RUNTIME_ERROR", 0.5, None), "timeout": ("TIMEOUT", 2.0, None)}


def released_shares():
    """(status class shares, pass speed shares), each summing to 1."""
    classes = ["passed", "compile", "numerical", "runtime", "timeout"]
    shares = dict.fromkeys(classes, 0.0)
    speed_num = dict.fromkeys(SPEED_SPLITS, 0.0)
    for model in RELEASED_HOPPER.values():
        counted = {c: 0 for c in classes}
        for label, n in model["turns"].items():
            cls = LABEL_CLASS[label]
            if cls:
                counted[cls] += n
        total = sum(counted.values())
        for c in classes:
            shares[c] += counted[c] / total / len(RELEASED_HOPPER)
        passes = sum(model["pass_speeds"].values())
        # A model's passes weigh as much as its share of passes in the mix.
        for b, n in model["pass_speeds"].items():
            if passes:
                speed_num[b] += counted["passed"] / total * n / passes
    speed_total = sum(speed_num.values())
    return shares, {b: v / speed_total for b, v in speed_num.items()}


def largest_remainder(shares, n):
    """Integer counts summing to n, in proportion to `shares` (Hamilton's method)."""
    raw = {k: v * n for k, v in shares.items()}
    counts = {k: math.floor(v) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: (counts[k] - raw[k], k))[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


def allocation(n):
    shares, speeds = released_shares()
    counts = largest_remainder(shares, n)
    passes = largest_remainder(speeds, counts.pop("passed"))
    return {**{"pass_" + b: passes[b] for b in SPEED_SPLITS}, **counts}, shares, speeds


def materialize(bin_dir, suite, into):
    """{case name: file} of `ptxbench suite materialize`."""
    out = subprocess.run([str(pathlib.Path(bin_dir) / "ptxbench"), "suite", "materialize", str(ROOT / suite), str(into),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return {c["name"]: c["file"] for c in json.loads(out)}


def cmd_mix(a):
    out = pathlib.Path(a.out)
    cases_dir = out / "cases"
    cases_dir.mkdir(parents=True, exist_ok=True)
    counts, shares, speeds = allocation(a.submissions)
    files, expects = {}, {}
    for i, suite in enumerate(sorted({s for v in STAND_INS.values() for s, _ in v})):
        spec = json.loads((ROOT / suite).read_text())
        if spec["definition"] != DEFINITION:
            sys.exit(f"eval_throughput: {suite} is for {spec['definition']}, the mix for {DEFINITION}")
        files[suite] = materialize(a.bin, suite, out / "src" / str(i))
        expects[suite] = {c["name"]: c["expect"] for c in spec["cases"]}
    cases, listing = [], []
    for cls, count in counts.items():
        for k in range(count):
            suite, name = STAND_INS[cls][k % len(STAND_INS[cls])]
            index = len(cases)
            label = f"{index:03d}_{name}"
            header = (f"// eval_throughput submission {index} ({cls}, stand-in {name} of {suite}): its own line, "
                      "so that no two sources of the mix are equal")
            expect = dict(expects[suite][name])
            if a.fake:
                status, seconds, speedup = FAKE[cls]
                header += f" PTXB_FAKE_STATUS={status} PTXB_FAKE_SECONDS={seconds}"
                if speedup:
                    header += f" PTXB_FAKE_SPEEDUP={speedup}"
                expect = {"status": status}  # the fake backend fills no stage
            source = pathlib.Path(files[suite][name]).read_text()
            (cases_dir / f"{label}.cu").write_text(header + "\n" + source)
            cases.append({"name": label, "file": f"cases/{label}.cu", "expect": expect})
            listing.append({"index": index, "class": cls, "stand_in": name, "suite": suite, "expected": expect["status"]})
    (out / "mix_suite.json").write_text(json.dumps({
        "definition": DEFINITION,
        "description": f"eval_throughput mix of {a.submissions} distinct sources; shares from {RELEASE}",
        "cases": cases}, indent=1) + "\n")
    (out / "mix.json").write_text(json.dumps({
        "source": RELEASE, "models": list(RELEASED_HOPPER), "definition": DEFINITION, "fake": a.fake,
        "status_shares": {k: round(v, 4) for k, v in shares.items()},
        "pass_speed_shares": {f"{k} ({SPEED_SPLITS[k]})": round(v, 4) for k, v in speeds.items()},
        "counts": counts, "cases": listing}, indent=1) + "\n")
    print("mix: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + f" ({a.submissions} distinct sources)")
    return 0


def get_json(url, timeout=10.0):
    """(HTTP status, parsed body or None); status 0 when unreachable."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"null")
        except ValueError:
            return e.code, None
    except (OSError, ValueError):
        return 0, None


def cmd_ready(a):
    """Waits until every worker has passed its first health check (it logs "taking work") and
    /v1/health lists them running; prints the seconds it waited."""
    start = time.monotonic()
    log = pathlib.Path(a.log)
    while True:
        ready = log.exists() and len(re.findall(r"taking work on GPU", log.read_text(errors="replace"))) >= a.workers
        if ready:
            _, health = get_json(a.service + "/v1/health", 5)
            running = sum(1 for g in (health or {}).get("gpus", []) if g.get("state") == "running")
            if running >= a.workers:
                print(f"{time.monotonic() - start:.1f}")
                return 0
        if a.pid and not os.path.exists(f"/proc/{a.pid}"):
            print(f"serve (pid {a.pid}) exited before its workers were ready", file=sys.stderr)
            return 1
        if time.monotonic() - start > a.timeout:
            _, health = get_json(a.service + "/v1/health", 5)
            print(f"not ready within {a.timeout:.0f} s; /v1/health: {json.dumps(health)[:600]}", file=sys.stderr)
            return 1
        time.sleep(0.5)


def cmd_fetch(a):
    """Each submission's task document (state, attempts, worker, verdict) by the ids of the load's records."""
    records = [json.loads(line) for line in pathlib.Path(a.load).read_text().splitlines() if line.strip()]
    n = 0
    with open(a.out, "w") as out:
        for r in records:
            if not r.get("id"):
                continue
            status, task = get_json(f"{a.service}/v1/evaluations/{r['id']}")
            if status != 200 or not isinstance(task, dict):
                task = {"id": r["id"], "fetch_error": f"HTTP {status}"}
            out.write(json.dumps(task) + "\n")
            n += 1
    print(f"fetched {n} task(s) of {len(records)} record(s)")
    return 0


def cmd_leftovers(a):
    """Prints the pids of processes that run from a folder (command line or working directory in it):
    what a stopped service left of its runners and tools, in its own cache folder."""
    under = os.path.realpath(a.under)
    if not a.under or under == "/" or not os.path.isdir(under):
        sys.exit(f"eval_throughput: leftovers: '{a.under}' is not a folder to look under")
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (os.getpid(), os.getppid()):
            continue
        try:
            cmdline = open(f"/proc/{entry}/cmdline", "rb").read().decode(errors="replace")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue  # gone, or not ours to read
        if under in cmdline or cwd == under or cwd.startswith(under + "/"):
            pids.append(entry)
    print(" ".join(pids))
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mix", help="write the mix suite (DIR/mix_suite.json), its cases and DIR/mix.json")
    m.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    m.add_argument("--submissions", type=int, default=48)
    m.add_argument("--out", required=True)
    m.add_argument("--fake", action="store_true", help="mark each source for `serve --fake-gpus` (plumbing check)")
    r = sub.add_parser("ready", help="wait until every worker of a fresh service takes work")
    r.add_argument("--service", required=True)
    r.add_argument("--log", required=True)
    r.add_argument("--workers", type=int, required=True)
    r.add_argument("--pid", type=int, default=0)
    r.add_argument("--timeout", type=float, default=300)
    f = sub.add_parser("fetch", help="the task documents (with verdicts) of a load's records")
    f.add_argument("--service", required=True)
    f.add_argument("--load", required=True)
    f.add_argument("--out", required=True)
    lo = sub.add_parser("leftovers", help="pids of the processes running from a folder")
    lo.add_argument("--under", required=True)
    a = p.parse_args(argv)
    if a.cmd == "mix" and a.submissions < 1:
        p.error("--submissions must be positive")
    return {"mix": cmd_mix, "ready": cmd_ready, "fetch": cmd_fetch, "leftovers": cmd_leftovers}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Repair seeds (docs/agent.md, "Repair trajectories") from real verdicts, for a repair run that
measures whether a model (or the expert policy) fixes kernels with known bugs: each named case of a
fixture suite is materialised (its file, or its base with its edits), evaluated on this host's GPU
by `ptxbench eval --feedback --out`, and appended to OUT.jsonl as one seed with the feedback the
evaluator gave it. The run config then names the file in `"repair_from": {"file": ...}`.

    python3 scripts/bench/repair_seeds_from_fixtures.py tests/fixtures/gemm/suite.json gemm_n7168_k5120 \\
        seeds.jsonl compile_error wrong_result host_segfault

PTXBENCH_BIN: the ptxbench binary (default build/bin/ptxbench); SEEDS_WORK: where the kernels and
verdicts are written (default a new temporary folder). Run from a checkout (the data root).
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    suite_path, definition, out_path, *cases = argv
    suite = json.loads(pathlib.Path(suite_path).read_text())
    root = pathlib.Path(suite_path).parent
    work = pathlib.Path(os.environ.get("SEEDS_WORK") or tempfile.mkdtemp(prefix="ptxbench-seeds-"))
    work.mkdir(parents=True, exist_ok=True)
    ptxbench = os.environ.get("PTXBENCH_BIN", "build/bin/ptxbench")
    by_name = {c["name"]: c for c in suite["cases"]}
    with open(out_path, "a") as out:
        for name in cases:
            if name not in by_name:
                sys.exit(f"{suite_path} has no case {name}")
            case = by_name[name]
            source = (root / case.get("file", case.get("base"))).read_text()
            for e in case.get("edits", []):
                if e["find"] not in source:
                    sys.exit(f"{name}: edit not found")
                source = source.replace(e["find"], e["replace"], 1)
            path = work / f"{name}.cu"
            path.write_text(source)
            r = subprocess.run([ptxbench, "eval", definition, str(path), "--feedback", "--out", str(work)],
                               capture_output=True, text=True, timeout=300)
            verdict = json.loads((work / f"{name}.verdict.json").read_text())
            feedback = r.stdout.split("\n", 1)[1] if r.stdout.startswith("== ") else r.stdout
            seed = {"definition": definition, "wrong_source": source, "feedback": feedback.strip() + "\n",
                    "status": verdict["status"], "origin": {"fixture": f"{suite_path}:{name}"}}
            out.write(json.dumps(seed) + "\n")
            print(f"seed {name}: {verdict['status']}: {verdict.get('message', '')[:120]}")


if __name__ == "__main__":
    main(sys.argv[1:])

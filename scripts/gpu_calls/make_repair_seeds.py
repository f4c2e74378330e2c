#!/usr/bin/env python3
# Repair seeds (docs/agent.md, "Repair trajectories") from real verdicts: each named case of a fixture
# suite is materialised (its file, or its base with its edits), evaluated by `ptxbench eval
# --feedback --out`, and written as one seed line with the feedback the evaluator gave it.
# Used by the GPU calls of session 10:  make_repair_seeds.py SUITE.json DEFINITION OUT.jsonl CASE...
import json, os, pathlib, subprocess, sys

suite_path, definition, out_path, *cases = sys.argv[1:]
suite = json.load(open(suite_path))
root = pathlib.Path(suite_path).parent
work = pathlib.Path(os.environ.get("SEEDS_WORK", "/tmp/seeds"))
work.mkdir(parents=True, exist_ok=True)
by_name = {c["name"]: c for c in suite["cases"]}
with open(out_path, "a") as out:
    for name in cases:
        case = by_name[name]
        source = (root / case.get("file", case.get("base"))).read_text()
        for e in case.get("edits", []):
            if e["find"] not in source:
                sys.exit(f"{name}: edit not found")
            source = source.replace(e["find"], e["replace"], 1)
        path = work / f"{name}.cu"
        path.write_text(source)
        r = subprocess.run(["build/bin/ptxbench", "eval", definition, str(path), "--feedback", "--out", str(work)],
                           capture_output=True, text=True, timeout=120)
        verdict = json.load(open(work / f"{name}.verdict.json"))
        feedback = r.stdout.split("\n", 1)[1] if r.stdout.startswith("== ") else r.stdout
        seed = {"definition": definition, "wrong_source": source, "feedback": feedback.strip() + "\n",
                "status": verdict["status"], "origin": {"fixture": f"{suite_path}:{name}"}}
        out.write(json.dumps(seed) + "\n")
        print(f"seed {name}: {verdict['status']}: {verdict.get('message', '')[:120]}")

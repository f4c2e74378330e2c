#!/usr/bin/env bash
# Session 12 call 2 (results/h200.md, "session 12"; carried: .devcarry/{bin,lib,redis},
# .devcarry/call1_runs.db = call 1's run store with the main job's run):
#  1. the Triton GEMM's wgmma test (issue 22); 2. when it passed, the expert policy in Triton and
#  the report beside call 1's main run; 3. Redis parity with four evaluations per speed case on
#  each path (issue 23).
set -o pipefail
source scripts/gpu_calls/device_env.sh call2
echo "== 1. Triton wgmma test $(el)"
triton_wgmma_test && triton_ok=1 || triton_ok=0
echo "== 2. expert policy in Triton $(el)"
cp .devcarry/call1_runs.db $O/runs.db
(( triton_ok )) && triton_expert_run 170 "$(newest_run $O/runs.db)"
echo "== 3. Redis parity, 4 evaluations per speed case $(el)"
python3 - <<'PY'
import json
s = json.load(open("tests/fixtures/gemm/suite.json"))
s["cases"] = [c for c in s["cases"] if c["name"] in ("wgmma_tma_gemm", "simt_tiled_gemm", "stdout_flood")]
json.dump(s, open("tests/fixtures/gemm/parity_speed_suite.json", "w"), indent=1)
PY
chmod +x .devcarry/redis/redis-server
RD=$PWD/.devcarry/redis; printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s/redis-server "$@"\n' "$RD" "$RD" > /tmp/redis-server; chmod +x /tmp/redis-server
OUT=$O/parity REDIS_SERVER=/tmp/redis-server COUNT=12 SUITE=tests/fixtures/gemm/parity_speed_suite.json timeout -s KILL $(left) \
  bash scripts/gpu_calls/session11_redis_parity.sh 2>&1 | tee $O/parity_summary.txt
python3 - $O/parity <<'PY'
import json, sys, statistics
out = sys.argv[1]
for path in ("sqlite", "redis"):
    try: rows = [json.loads(l) for l in open(f"{out}/{path}.jsonl")]
    except OSError: continue
    by = {}
    for r in rows:
        if r.get("speedup"): by.setdefault(r.get("case"), []).append(r["speedup"])
    for case, v in sorted(by.items()):
        print(f"{path:6s} {case:20s} n={len(v)} " + " ".join(f"{x:.4f}" for x in v) + f"  spread {100*(max(v)-min(v))/statistics.median(v):.2f}%")
PY
echo "done $(el)"

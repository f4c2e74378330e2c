#!/usr/bin/env bash
# The paper's Fixit chain on one GPU, end to end with real verdicts (issue 36):
#   1. a student run: scripts/bench/scripted_student.py answers every turn with a known-wrong kernel
#      (a compile error, then the fixture suites' broken variants) through the model policy;
#   2. `ptxbench data seeds` picks its failures by the original's rule;
#   3. a repair run from those seeds with the expert policy as the teacher;
#   4. `ptxbench data build` of the six Table 12 recipes (configs/recipes/s1..s6.json) over the
#      store, without a teacher (--no-teacher: record counts and composition; no reasoning), and
#      one record's metadata.
#   scripts/bench/fixit_chain.sh            (PTXBENCH_BIN: build/bin; OUT: /tmp/ptxbench-fixit-chain;
#                                            WORKERS_PER_GPU: the local service's workers, 4)
# Needs an sm_90a GPU (the service is started by the runs: "service": "local").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
bin=${PTXBENCH_BIN:-build/bin}
OUT=${OUT:-/tmp/ptxbench-fixit-chain}
port=${STUDENT_PORT:-18080}
mkdir -p "$OUT"
export PTXBENCH_HOME=$root
export PATH=/usr/local/cuda/bin:$PATH
# cuDNN 9 where only PyTorch's wheel has it (the GPU host): its folder before the system's.
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))' 2>/dev/null || true)
[ -n "$sp" ] && export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
store=$OUT/runs.db
local_service=(--local-service-arg="--workers-per-gpu=${WORKERS_PER_GPU:-4}")
log() { echo "== $(date -u +%H:%M:%S) $*"; }

python3 scripts/bench/scripted_student.py --port "$port" >"$OUT/student_model.log" 2>&1 &
student_pid=$!
trap 'kill $student_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "on port" "$OUT/student_model.log" && break; sleep 0.1; done

cat >"$OUT/student.json" <<EOF
{"name": "scripted student (known-wrong kernels)", "policy": "model",
 "model": {"provider": "openai", "base_url": "http://127.0.0.1:$port/v1", "model": "scripted-student", "api_key_env": ""},
 "definitions": ["mha_with_lse_d128", "mha_bwd_d128"], "prompt_tags": ["params", "contract"],
 "trajectories_per_tag": 1, "num_turns": 2, "concurrency": 4, "eval_options": {"trials": 1}, "service": "local"}
EOF
log "student run"
"$bin/ptxbench" run --config "$OUT/student.json" --store "$store" --runs-dir "$OUT/runs" "${local_service[@]}" >"$OUT/student_run.log" 2>&1
tail -2 "$OUT/student_run.log"
student=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT id FROM runs WHERE model='scripted-student' ORDER BY created_at DESC LIMIT 1\").fetchone()[0])" "$store")

log "data seeds --from $student"
"$bin/ptxbench" data seeds --from "$student" --store "$store" --out "$OUT/seeds.jsonl" | tee "$OUT/seeds.txt"

cat >"$OUT/repair.json" <<EOF
{"name": "expert repairs of the student's failures", "policy": "expert", "prompt_tags": ["params"],
 "num_turns": 1, "concurrency": 4, "eval_options": {"trials": 1}, "service": "local",
 "repair_from": {"file": "$OUT/seeds.jsonl"}}
EOF
log "repair run (expert policy)"
"$bin/ptxbench" run --config "$OUT/repair.json" --store "$store" --runs-dir "$OUT/runs" "${local_service[@]}" >"$OUT/repair_run.log" 2>&1
tail -2 "$OUT/repair_run.log"

for s in 1 2 3 4 5 6; do
  log "data build s$s"
  "$bin/ptxbench" data build "configs/recipes/s$s.json" --store "$store" --no-teacher --out "$OUT/s$s" >"$OUT/s$s.log" 2>&1
  grep -E "^records|^pairs|failed turns" "$OUT/s$s.log" || tail -3 "$OUT/s$s.log"
done
log "one record of s5"
head -1 "$OUT/s5/train.jsonl" | python3 -c "import json,sys; print(json.dumps(json.loads(sys.stdin.read())['meta'], indent=1))" \
  | tee "$OUT/s5_record_meta.json"

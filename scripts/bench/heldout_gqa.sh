#!/usr/bin/env bash
# The held-out GQA classes on one sm_90a GPU (issue 36, item 5; docs/definitions.md, "Held-out GQA
# definitions"), each section one thing the results file reports (results/heldout_gqa.md):
#   tests     the trusted reference against fp64, the cuDNN baseline against fp64, the operators,
#             and the fixture suites on the "-small" workloads (GPU tests)
#   suites    every GQA fixture case at the released workload (`ptxbench suite run`)
#   expert    configs/heldout_gqa_expert.json: the expert policy over the set heldout-gqa through a
#             local service (the SIMT fixtures stand in for experts), with each verdict's cuDNN time
#   torch     PyTorch's ways to run the same shapes (scripts/bench/torch_gqa.py), for the baseline
#   scripts/bench/heldout_gqa.sh        (PTXBENCH_BIN: build/bin; OUT: /tmp/ptxbench-heldout-gqa;
#                                        SECTIONS: "tests suites expert torch"; PYTHON: python3;
#                                        WORKERS_PER_GPU: the expert run's local service, 3)
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
bin=${PTXBENCH_BIN:-build/bin}
OUT=${OUT:-/tmp/ptxbench-heldout-gqa}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export PTXBENCH_HOME=$root
export PATH=/usr/local/cuda/bin:$PATH
# cuDNN 9 where only PyTorch's wheel has it (the GPU host): its folder before the system's.
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))' 2>/dev/null || true)
[ -n "$sp" ] && export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/heldout_gqa.log"; }
summarize() { python3 scripts/bench/summarize_verdicts.py "$@" | tee -a "$OUT/heldout_gqa.log"; }

for section in ${SECTIONS:-tests suites expert torch}; do
  case $section in
    tests)
      log "GPU tests: reference, cuDNN baseline, operators, fixtures on -small"
      "$bin/ptxbench_gpu_tests" --gtest_filter='GqaReference.*:GqaCudnn*:GqaOperators.*:FixtureVerdicts.Gqa*' \
        >"$OUT/gpu_tests.log" 2>&1
      echo "rc=$?" >>"$OUT/gpu_tests.log"
      grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|rc=|max err|ms" "$OUT/gpu_tests.log" | tee -a "$OUT/heldout_gqa.log"
      ;;
    suites)
      for s in tests/fixtures/gqa/*_suite.json; do
        name=$(basename "$s" .json)
        log "suite $name (released workload)"
        "$bin/ptxbench" suite run "$s" --out "$OUT/suites/$name" >"$OUT/$name.log" 2>&1
        echo "rc=$?" >>"$OUT/$name.log"
        tail -n 15 "$OUT/$name.log" | tee -a "$OUT/heldout_gqa.log"
        summarize "$OUT/suites/$name"/*.verdict.json
      done
      ;;
    expert)
      log "expert policy over heldout-gqa"
      "$bin/ptxbench" run --config configs/heldout_gqa_expert.json --store "$OUT/runs.db" --runs-dir "$OUT/runs" \
        --local-service-arg="--workers-per-gpu=${WORKERS_PER_GPU:-3}" \
        >"$OUT/expert_run.log" 2>&1
      echo "rc=$?" >>"$OUT/expert_run.log"
      tail -n 6 "$OUT/expert_run.log" | tee -a "$OUT/heldout_gqa.log"
      python3 - "$OUT/runs.db" <<'PY' | tee -a "$OUT/heldout_gqa.log"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT v.verdict, tr.definition FROM verdicts v JOIN trajectories tr ON tr.id = v.trajectory_id"):
    v = json.loads(row[0] or "{}")
    print(f'{row[1]:<44} {v.get("status", "?"):<20} cand {v.get("candidate_us") or 0:9.1f} us  '
          f'cuDNN {v.get("baseline_us") or 0:9.1f} us  speedup {v.get("speedup") or 0:.4f}')
PY
      ;;
    torch)
      log "PyTorch on the same shapes"
      "$PYTHON" scripts/bench/torch_gqa.py >"$OUT/torch_gqa.jsonl" 2>"$OUT/torch_gqa.err"
      echo "rc=$?" >>"$OUT/torch_gqa.err"
      cat "$OUT/torch_gqa.jsonl" | tee -a "$OUT/heldout_gqa.log"
      tail -n 3 "$OUT/torch_gqa.err"
      ;;
    *) echo "heldout_gqa.sh: unknown section $section" >&2; exit 2 ;;
  esac
done

#!/usr/bin/env bash
# Session 12 calls 3, 4, 5 and 8 (results/h200.md, "session 12"): the Triton track on the H200 with
# each fix of the shim in turn (carried: .devcarry/{bin,lib}, .devcarry/call1_runs.db = call 1's
# run store with the main job's run). PROBE=1 (call 3) first lists the processes Triton starts at
# a warm call (scripts/gpu_calls/triton_spawn_probe.py).
#  1. the Triton GEMM's wgmma test; when it passes: 2. the Triton fixture suites (GEMM, attention
#  forward); 3. the expert policy in Triton and the report beside call 1's main run (issue 22).
#   NAME=call8 BUDGET=430 bash scripts/gpu_calls/session12_triton.sh
set -o pipefail
source scripts/gpu_calls/device_env.sh "${NAME:-triton}" "${BUDGET:-575}"
if [[ ${PROBE:-0} == 1 ]]; then
  echo "== 0. spawn probe $(el)"
  timeout 60 $PTXBENCH_PYTHON scripts/gpu_calls/triton_spawn_probe.py tests/fixtures/triton/gemm_tl_dot.py /tmp/probe_cache 2>&1 | tail -5
fi
echo "== 1. Triton wgmma test $(el)"
triton_wgmma_test || exit 0
echo "== 2. Triton suites $(el)"
for t in GemmSuiteGetsItsExpectedVerdicts AttentionForwardSuiteGetsItsExpectedVerdicts; do
  timeout -s KILL $(( $(left) > 330 ? 165 : $(left) / 2 )) build/bin/ptxbench_gpu_tests --gtest_filter="TritonVerdicts.$t" > $O/triton_$t.log 2>&1
  echo "$t rc=$? $(el)"
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |Failure|\[triton\]" $O/triton_$t.log | head -24
done
echo "== 3. expert policy in Triton $(el)"
cp .devcarry/call1_runs.db $O/runs.db
triton_expert_run $(( $(left) - 10 )) "$(newest_run $O/runs.db)"
echo "done $(el)"

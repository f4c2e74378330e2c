#!/usr/bin/env bash
# Session 12 call 7 (diagnosis, results/h200.md "session 12"): the runner on the Triton GEMM's build
# folder outside the evaluator's sandbox, with and without its seccomp filter; the shim's miss
# message names the platform key, Triton's cache folder and the C modules the cache holds.
set -o pipefail
source scripts/gpu_calls/device_env.sh call7
triton_wgmma_test
d=$(dirname "$(find $PTXBENCH_CACHE_DIR/triton -name build.json | head -1)"); echo "build dir $d"
for mode in filter no-filter; do
  flag=; [[ $mode == no-filter ]] && flag=--no-seccomp
  timeout 60 build/bin/ptxbench-runner $flag once --library $d/candidate.so --spec $d/tensors.json --seed 1 --calls 2 --device 0 \
    --language triton --owner-pid $$ > $O/once_$mode.log 2>&1
  echo "== $mode rc=$?"; grep -o "platform key.*" $O/once_$mode.log | cut -c1-600
done

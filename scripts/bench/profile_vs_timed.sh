#!/usr/bin/env bash
# The profiled call against the timed calls (docs/verdict.md, "The profile against the timed
# calls"; results/profile_vs_timed.md) on this host's GPU:
#   metrics  which ncu metrics the binding needs exist on this GPU, and how ncu splits them into passes
#   honest   the honest fixtures, the five experts, the Triton GEMM: profiled device time against the
#            timed median, hardware against patched GMMA/TMA counts (the binding's calibration)
#   suites   the GEMM fixture suite, the adversarial suite (with the profile-switch cases) and the
#            attention fixture suites, each verdict against its expectation
#   walltime full evaluations of the expert GEMM with the binding on and off, alternating
#   cupti    whether CUPTI's SASS metrics count every kernel of a multi-kernel candidate (the GPU test)
# Usage: scripts/bench/profile_vs_timed.sh OUT_DIR [SECTION...]   (default: every section)
# Needs build/bin/{ptxbench,ptxbench-runner} (and ptxbench_gpu_tests for cupti), ncu and
# compute-sanitizer; PTXBENCH_PYTHON names a Python with torch and Triton for the Triton GEMM.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
O=${1:?usage: profile_vs_timed.sh OUT_DIR [SECTION...]}
shift
sections=${*:-metrics honest suites walltime cupti}
mkdir -p "$O"
P=build/bin/ptxbench
export PTXBENCH_HOME=$root
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s]"; }
summarize() { python3 scripts/bench/profile_vs_timed_summary.py "$@"; }
ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv > "$O/gpu.txt" 2>&1
git rev-parse HEAD > "$O/commit.txt" 2>/dev/null || true

for section in $sections; do
  echo "== $section $(el)"
  case $section in
    metrics)
      "$ncu_bin" --version > "$O/ncu_version.txt" 2>&1
      "$ncu_bin" --query-metrics --chip gh100 2>&1 | grep -E "pipe_tensor_op_gmma|pipe_tma|gpu__time_duration" > "$O/ncu_metrics.txt"
      cat "$O/ncu_metrics.txt" | head -20
      # Passes: the patched per-opcode metrics alone, the binding's metrics alone, both.
      d=$O/passes; mkdir -p "$d"
      nvcc -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -Iknowledge/abi -shared -Xcompiler -fPIC \
        -o "$d/wgmma.so" tests/fixtures/gemm/wgmma_tma_gemm.cu -lcuda
      python3 - "$d/spec.json" <<'PY'
import json, sys
t = lambda n, s, out: {"name": n, "dtype": "bfloat16", "shape": s, "strides": [s[1], 1], "is_output": out}
json.dump({"tensors": [t("A", [8192, 5120], False), t("B", [7168, 5120], False), t("C", [8192, 7168], True)]}, open(sys.argv[1], "w"))
PY
      sass=sass__thread_inst_executed_true_per_opcode,sass__inst_executed_per_opcode
      hw=gpu__time_duration.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__inst_executed_pipe_tma.sum
      for set in sass hw both; do
        case $set in sass) m=$sass ;; hw) m=$hw ;; both) m=$sass,$hw ;; esac
        timeout 120 "$ncu_bin" --clock-control none -k regex:wgmma --metrics "$m" build/bin/ptxbench-runner --no-seccomp once \
          --library "$d/wgmma.so" --spec "$d/spec.json" --seed 1 --calls 1 --device 0 --owner-pid $$ > "$d/$set.txt" 2>&1
        echo "$set: $(grep -o '[0-9]* pass[es]*' "$d/$set.txt" | head -1)"
        grep -E "gpu__time|pipe_tensor|pipe_tma" "$d/$set.txt" | head -4
      done
      ;;
    honest)
      d=$O/honest; mkdir -p "$d"
      $P suite materialize tests/fixtures/gemm/adversarial_suite.json "$d/adv" > /dev/null
      for f in tests/fixtures/gemm/simt_tiled_gemm.cu tests/fixtures/gemm/wgmma_tma_gemm.cu "$d/adv/half_the_tiles_on_cuda_cores.cu"; do
        n=$(basename "$f" .cu)
        timeout 240 $P eval gemm_n7168_k5120 "$f" --out "$d/verdicts" > "$d/$n.log" 2>&1; echo "$n rc=$? $(el)"
      done
      for s in knowledge/hopper/experts/*_suite.json; do
        timeout 300 $P suite run "$s" --out "$d/verdicts" > "$d/$(basename "$s" .json).log" 2>&1; echo "$(basename "$s") rc=$? $(el)"
      done
      if [ -n "${PTXBENCH_PYTHON:-}" ]; then
        timeout 240 $P eval gemm_n7168_k5120 tests/fixtures/triton/gemm_tl_dot.py --out "$d/verdicts" > "$d/triton.log" 2>&1
        echo "triton rc=$? $(el)"
      fi
      summarize table "$d/verdicts" | tee "$d/summary.txt"
      ;;
    suites)
      d=$O/suites; mkdir -p "$d"
      for s in tests/fixtures/gemm/adversarial_suite.json tests/fixtures/gemm/suite.json tests/fixtures/attention/*_suite.json; do
        n=$(basename "$(dirname "$s")")_$(basename "$s" .json)
        timeout 580 $P suite run "$s" --out "$d/$n" > "$d/$n.log" 2>&1; echo "$n rc=$? $(el)"
        tail -1 "$d/$n.log"; grep MISMATCH "$d/$n.log" | head -5
      done
      summarize table "$d"/* | tee "$d/summary.txt"
      ;;
    walltime)
      d=$O/walltime; mkdir -p "$d"
      for i in 1 2; do
        for mode in on off; do
          flag=(); [ $mode = off ] && flag=(--no-profile-binding)
          timeout 120 $P eval gemm_n7168_k5120 knowledge/hopper/experts/gemm_n7168_k5120.cu "${flag[@]}" --json > "$d/$mode.$i.json" 2> "$d/$mode.$i.err"
          echo "$mode.$i rc=$? $(el)"
        done
      done
      summarize walltime "$d" | tee "$d/summary.txt"
      ;;
    cupti)
      timeout 150 build/bin/ptxbench_gpu_tests --gtest_filter='RuntimeSassTools.*' > "$O/cupti.log" 2>&1
      echo "cupti rc=$? $(el)"
      grep -E "^\[ *(OK|FAILED|SKIPPED) |cupti|CUPTI|kernels" "$O/cupti.log" | head -20
      ;;
  esac
done
echo "done $(el)"

#!/usr/bin/env bash
# GPU call 2 of session 10 (results/h200.md, "session 10"), kept as it ran (carried: .devcarry/{bin,lib},
# .devcarry/gemm, .devcarry/repair_expert.json). Everything lands in /tmp/out, returned as one tarball.
#  1. gemm_n5376_k21504's cuBLASLt, full evaluation (the builtin-under-ncu fix);
#  2. GEMM variants of round 2: full evaluation at M = 8192, two timing repeats, every other M;
#  3. a repair run: seeds from real failures of GEMM fixtures, repaired by the expert policy.
set -o pipefail
mkdir -p build/bin build/lib /tmp/out && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))'); export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c2
[ ! -e /work/main ] && mkdir -p /work && ln -s $PWD /work/main
O=/tmp/out; trap 'tar czf $OUT/call2.tgz -C $O .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,pci.bus_id --format=csv > $O/gpu.txt
S=scripts/gpu_calls/summarize_verdicts.py; P=build/bin/ptxbench; d=gemm_n7168_k5120; E="--no-sanitize --no-profile --json"
echo "== 1. K=21504 cuBLASLt, full"
timeout 120 $P eval gemm_n5376_k21504 --builtin cublaslt --json > $O/k21504.jsonl 2>>$O/err.log; python3 $S < $O/k21504.jsonl
echo "== 2. GEMM variants, round 2"
mkdir -p /tmp/v && cp .devcarry/gemm/v[5-9]*.cu /tmp/v/
sed -e 's/STAGES = 4,/STAGES = 3,/' -e 's/^constexpr int EPI_PANELS = 2;/constexpr int EPI_PANELS = 4;/' /tmp/v/v5_tma_epilogue.cu > /tmp/v/v5s3p4.cu
sed 's/^constexpr bool kStreamK = true;/constexpr bool kStreamK = false;/' /tmp/v/v6_256x128.cu > /tmp/v/v6nosk.cu
for v in v7_deferred_epilogue v5_tma_epilogue v6_256x128 v5s3p4 v6nosk; do f=/tmp/v/$v.cu; echo "-- $v"
  [[ $v == v6nosk ]] && grep -q '"status":"PASSED"' $O/var_v6_256x128.jsonl && continue  # only if v6 failed
  timeout 90 $P eval $d $f --json > $O/var_$v.jsonl 2>>$O/err.log; python3 $S < $O/var_$v.jsonl
  if grep -q '"status":"PASSED"' $O/var_$v.jsonl; then
    timeout 60 $P eval $d $f --repeat 2 $E >> $O/var_$v.jsonl 2>>$O/err.log
    for m in 70 232 972 2379; do timeout 40 $P eval $d $f --workload M=$m --no-profile --json >> $O/var_$v.jsonl 2>>$O/err.log; done
    python3 $S < $O/var_$v.jsonl | tail -6
  fi
done
echo "== 3. repair run"
SEEDS_WORK=$O/seeds timeout 200 python3 scripts/gpu_calls/make_repair_seeds.py tests/fixtures/gemm/suite.json $d $O/seeds.jsonl compile_error wrong_result host_segfault
timeout 240 $P run --config .devcarry/repair_expert.json --store $O/repair.db --runs-dir $O/runs > $O/repair_run.log 2>&1; echo "repair rc=$?"
tail -12 $O/repair_run.log
tail -5 $O/err.log

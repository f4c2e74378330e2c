#!/usr/bin/env bash
# GPU call 1 of session 10 (results/h200.md, "session 10"), kept as it ran: run on the device from the
# repository root with the stripped binaries carried in .devcarry/{bin,lib} and the GEMM variants
# written this session in .devcarry/gemm (issue 18); $OUT receives the logs.
#  1. gemm_n5376_k21504's cuBLASLt through `ptxbench eval` under its new tolerance (must PASS);
#  2. fresh inputs on/off on one binary (issue 16: fresh inputs must not move honest kernels);
#  3. the GEMM variants: a full evaluation at M = 8192, two timing repeats, correctness at odd M.
set -o pipefail
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))'); export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c1
[ ! -e /work/main ] && mkdir -p /work && ln -s $PWD /work/main
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,pci.bus_id --format=csv > $OUT/gpu.txt
S=scripts/gpu_calls/summarize_verdicts.py; P=build/bin/ptxbench; d=gemm_n7168_k5120
echo "== 1. K=21504 cuBLASLt"
timeout 120 $P eval gemm_n5376_k21504 --builtin cublaslt --repeat 2 --json > $OUT/k21504.jsonl 2>>$OUT/err.log; python3 $S < $OUT/k21504.jsonl
echo "== 2. fresh inputs on/off"
E="--no-sanitize --no-profile --json"
block() { # label extra
  timeout 60 $P eval $d --builtin cublaslt --repeat 3 $E $2 >> $OUT/$1_aa.jsonl 2>>$OUT/err.log
  timeout 60 $P eval $d tests/fixtures/gemm/wgmma_tma_gemm.cu --repeat 3 $E $2 >> $OUT/$1_wgmma.jsonl 2>>$OUT/err.log
  timeout 60 $P eval $d knowledge/hopper/experts/gemm_n7168_k5120.cu --repeat 3 $E $2 >> $OUT/$1_expert.jsonl 2>>$OUT/err.log; }
for r in 1 2; do block fresh ""; block kept --no-fresh-inputs; done
for f in fresh kept; do for k in aa wgmma expert; do echo "-- $f $k"; python3 $S < $OUT/${f}_$k.jsonl; done; done
echo "== 3. GEMM variants (the expert first, at every M)"
for m in 70 232 972 2379; do timeout 40 $P eval $d knowledge/hopper/experts/gemm_n7168_k5120.cu --workload M=$m --no-profile --json >> $OUT/expert_every_m.jsonl 2>>$OUT/err.log; done
python3 $S < $OUT/expert_every_m.jsonl
mkdir -p /tmp/v && cp .devcarry/gemm/*.cu /tmp/v/
sed 's/^constexpr bool kWideTile = false;/constexpr bool kWideTile = true;/' /tmp/v/v1_pingpong.cu > /tmp/v/v1w.cu
sed 's/^constexpr bool kWideTile = false;/constexpr bool kWideTile = true;/' /tmp/v/v2_pingpong_cluster.cu > /tmp/v/v2w.cu
sed 's/^constexpr bool kLightPeerArrive = true;/constexpr bool kLightPeerArrive = false;/' /tmp/v/v2_pingpong_cluster.cu > /tmp/v/v2heavy.cu
sed 's/^constexpr bool kStreamK = true;/constexpr bool kStreamK = false;/' /tmp/v/v4_coop_cluster_streamk.cu > /tmp/v/v4nosk.cu
for v in v1_pingpong v1w v3_streamk v2_pingpong_cluster v2w v4_coop_cluster_streamk v4nosk v2heavy; do
  echo "-- $v"
  timeout 90 $P eval $d /tmp/v/$v.cu --json > $OUT/var_$v.jsonl 2>>$OUT/err.log; python3 $S < $OUT/var_$v.jsonl
  if grep -q '"status":"PASSED"' $OUT/var_$v.jsonl; then
    timeout 60 $P eval $d /tmp/v/$v.cu --repeat 2 $E >> $OUT/var_$v.jsonl 2>>$OUT/err.log
    for m in 70 232 972 2379; do timeout 40 $P eval $d /tmp/v/$v.cu --workload M=$m --no-profile --json >> $OUT/var_$v.jsonl 2>>$OUT/err.log; done
    python3 $S < $OUT/var_$v.jsonl | tail -6
  fi
done
tail -5 $OUT/err.log
echo "== 4. pack templates (mbarrier_arrive_peer is new)"
timeout 120 build/bin/ptxbench_gpu_tests --gtest_filter='Sm90Templates.*:HopperPack.*' > $OUT/templates.log 2>&1; echo rc=$?
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" $OUT/templates.log | head -30

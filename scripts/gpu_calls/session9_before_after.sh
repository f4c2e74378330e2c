#!/usr/bin/env bash
# GPU call of session 9 (results/h200.md, "session 9"), kept as it ran: run on the device from the
# repository root with the stripped binaries carried in .devcarry/{bin,lib} (NOTES.md; .devcarry/old
# holds those of the 'before' commit); $OUT receives the logs.
set -o pipefail
mv definitions/problem_sets.json /tmp/ 2>/dev/null; true  # the binaries carried are older than this data file
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))'); export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH
[ ! -e /work/main ] && mkdir -p /work && ln -s $PWD /work/main
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,pci.bus_id --format=csv > $OUT/gpu.txt
d=gemm_n7168_k5120; E="--no-sanitize --no-profile --json"
block() { # label bindir extra
  export PTXBENCH_CACHE_DIR=$PWD/.cache/$2
  timeout 40 $2/ptxbench eval $d --builtin cublaslt --repeat 3 $E $3 >> $OUT/$1.jsonl 2>>$OUT/err.log
  timeout 40 $2/ptxbench eval $d tests/fixtures/gemm/wgmma_tma_gemm.cu --repeat 3 $E $3 >> $OUT/$1.jsonl 2>>$OUT/err.log
  timeout 40 $2/ptxbench eval $d knowledge/hopper/experts/gemm_n7168_k5120.cu --repeat 3 $E $3 >> $OUT/$1.jsonl 2>>$OUT/err.log; }
wall() { export PTXBENCH_CACHE_DIR=$PWD/.cache/$2
  timeout 60 $2/ptxbench eval $d tests/fixtures/gemm/wgmma_tma_gemm.cu --json $3 > /dev/null 2>>$OUT/err.log
  s=$(date +%s%N); timeout 60 $2/ptxbench eval $d tests/fixtures/gemm/wgmma_tma_gemm.cu --json $3 >> $OUT/wall_$1.jsonl 2>>$OUT/err.log
  echo "$1 full eval wall $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a $OUT/wall.txt; }
for r in 1 2; do block before .devcarry/old/bin ""; block after build/bin ""; block flush build/bin --runner-l2-flush; done
for f in before after flush; do echo "== $f"; python3 scripts/gpu_calls/summarize_verdicts.py < $OUT/$f.jsonl; done
for r in 1 2; do wall before .devcarry/old/bin ""; wall after build/bin ""; wall flush build/bin --runner-l2-flush; done
tail -3 $OUT/err.log
echo "== adversarial GPU test"
export PTXBENCH_CACHE_DIR=$PWD/.cache/gt
timeout 200 build/bin/ptxbench_gpu_tests --gtest_filter='FixtureVerdicts.Adversarial*' > $OUT/adv.log 2>&1; echo rc=$?
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure|expected" $OUT/adv.log | head -30

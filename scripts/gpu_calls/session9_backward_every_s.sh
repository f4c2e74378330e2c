#!/usr/bin/env bash
# GPU call of session 9 (results/h200.md, "session 9"), kept as it ran: run on the device from the
# repository root with the stripped binaries carried in .devcarry/{bin,lib} (NOTES.md; .devcarry/old
# holds those of the 'before' commit); $OUT receives the logs.
set -o pipefail
mv definitions/problem_sets.json /tmp/ 2>/dev/null; true  # the binaries carried are older than this data file
cp .devcarry/pending/mha_bwd_d128_causal_suite.json knowledge/hopper/experts/
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))'); export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/h
[ ! -e /work/main ] && mkdir -p /work && ln -s $PWD /work/main
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm --format=csv > $OUT/gpu.txt
E="--no-sanitize --no-profile --json --call-timeout 10"
sed 's/constexpr bool kCausal = false;/constexpr bool kCausal = true;/' knowledge/hopper/experts/mha_bwd_d128.cu > /tmp/bwdc.cu
for S in 512 1024 2048 4096 8192 16384; do
  T=3; [ $S -ge 8192 ] && T=1
  timeout 60 build/bin/ptxbench eval mha_bwd_d128 knowledge/hopper/experts/mha_bwd_d128.cu --workload S=$S --trials $T $E >> $OUT/bwd.jsonl 2>>$OUT/err.log
  timeout 60 build/bin/ptxbench eval mha_bwd_d128_causal /tmp/bwdc.cu --workload S=$S --trials $T $E >> $OUT/bwdc.jsonl 2>>$OUT/err.log
done
for r in 2 3; do
  timeout 60 build/bin/ptxbench eval mha_bwd_d128 knowledge/hopper/experts/mha_bwd_d128.cu $E >> $OUT/bwd.jsonl 2>>$OUT/err.log
  timeout 60 build/bin/ptxbench eval mha_bwd_d128_causal /tmp/bwdc.cu $E >> $OUT/bwdc.jsonl 2>>$OUT/err.log
done
echo "== bwd (S=512..16384, then S=4096 twice)"; python3 scripts/gpu_calls/summarize_verdicts.py < $OUT/bwd.jsonl
echo "== bwd causal"; python3 scripts/gpu_calls/summarize_verdicts.py < $OUT/bwdc.jsonl
tail -3 $OUT/err.log
echo "== expert suites (full evaluation: memcheck + ncu)"
timeout 300 build/bin/ptxbench_gpu_tests --gtest_filter='FixtureVerdicts.Expert*' > $OUT/expert.log 2>&1; echo rc=$?
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure|Expected|Which is|case|status" $OUT/expert.log | head -40
ls /tmp/ptxbench* 2>/dev/null | head -3

#!/usr/bin/env bash
# GPU call of session 9 (results/h200.md, "session 9"), kept as it ran: run on the device from the
# repository root with the stripped binaries carried in .devcarry/{bin,lib} (NOTES.md; .devcarry/old
# holds those of the 'before' commit); $OUT receives the logs.
set -o pipefail
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))'); export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/i
[ ! -e /work/main ] && mkdir -p /work && ln -s $PWD /work/main
nvidia-smi --query-gpu=name,pci.bus_id --format=csv > $OUT/gpu.txt
E="--no-sanitize --no-profile --json --call-timeout 10"
sed 's/constexpr bool kCausal = false;/constexpr bool kCausal = true;/' knowledge/hopper/experts/mha_bwd_d128.cu > /tmp/bwdc.cu
for S in 512 1024 2048 4096 8192 16384 4096 4096; do
  T=3; [ $S -ge 8192 ] && T=1
  timeout 60 build/bin/ptxbench eval mha_bwd_d128_causal /tmp/bwdc.cu --workload S=$S --trials $T $E >> $OUT/bwdc.jsonl 2>>$OUT/err.log
done
echo "== bwd causal (S=512..16384, then S=4096 twice), tolerance 0.99999 + outlier bound 5e-2"; python3 scripts/gpu_calls/summarize_verdicts.py < $OUT/bwdc.jsonl
python3 - <<'P'
import json, os
for l in open(os.environ['OUT'] + '/bwdc.jsonl'):
    v = json.loads(l); c = (v.get('stages') or {}).get('correctness') or {}
    mm = [(t['name'], t['mismatches'], round(t['max_abs_error'], 4)) for tr in c.get('trials', []) for t in (tr.get('tensors') or []) if t.get('mismatches')]
    print(v['status'], c.get('tolerance'), mm[:6])
P
tail -2 $OUT/err.log
run_tests() { timeout $2 build/bin/ptxbench_gpu_tests --gtest_filter="$1" > $OUT/$3.log 2>&1; echo "$3 rc=$?"; grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure|status .*expected" $OUT/$3.log | head -30; }
run_tests 'FixtureVerdicts.Expert*' 200 expert
run_tests 'FixtureVerdicts.Attention*' 150 attention
run_tests '*Generalization*:MhaCudnn*:MhaOperators.*' 120 generalization

#!/usr/bin/env bash
# GPU call 5 of session 10 (results/h200.md, "session 10"): the expert GEMM's raster group size
# (GROUP_P cluster rows advancing together) around the chosen 8, timing only, interleaved.
set -o pipefail
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c5
S=scripts/gpu_calls/summarize_verdicts.py; P=build/bin/ptxbench; d=gemm_n7168_k5120; E="--no-sanitize --no-profile --json"
X=knowledge/hopper/experts/gemm_n7168_k5120.cu; mkdir -p /tmp/k
for g in 6 10 12; do sed "s/GROUP_P = 8,/GROUP_P = $g,/" $X > /tmp/k/g$g.cu; done; cp $X /tmp/k/g8.cu
for r in 1 2; do for g in 8 6 10 12; do timeout 60 $P eval $d /tmp/k/g$g.cu $E >> $OUT/g$g.jsonl 2>>$OUT/err.log; done; done
for g in 8 6 10 12; do echo "-- GROUP_P $g"; python3 $S < $OUT/g$g.jsonl | cut -c1-75; done

#!/usr/bin/env bash
# Session 11 call 3: the new expert GEMM (v9b) through full evaluations; the Triton GPU tests.
R=$OUT; mkdir -p /tmp/out; export OUT=/tmp/out
trap 'tar czf $R/call3.tgz -C /tmp/out .' EXIT
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c3
nvidia-smi --query-gpu=pci.bus_id,name --format=csv > $OUT/gpu.txt
S=scripts/gpu_calls/summarize_verdicts.py
X=knowledge/hopper/experts/gemm_n7168_k5120.cu
timeout -s KILL 200 build/bin/ptxbench eval gemm_n7168_k5120 $X --repeat 3 --json > $OUT/gemm_full.jsonl 2> $OUT/gemm_full.err
echo "== expert GEMM, full evaluations (memcheck + ncu)"; python3 $S < $OUT/gemm_full.jsonl | cut -c1-110
python3 - $OUT/gemm_full.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    l = l.strip()
    if not l.startswith("{"): continue
    v = json.loads(l)
    ex = v.get("target_instructions") or v.get("instructions") or {}
    print(v.get("status"), v.get("speedup"), "target_instruction_correct", v.get("target_instruction_correct"),
          "coverage", (v.get("extra") or {}).get("tensor_core_coverage", v.get("tensor_core_coverage")))
PY
export PTXBENCH_PYTHON=/opt/torch/.venv/bin/python3 PTXBENCH_TEST_OUT=$OUT
echo "== Triton"
timeout -s KILL 150 build/bin/ptxbench_gpu_tests --gtest_filter='TritonVerdicts.TheTritonGemmExecutesWgmma' > $OUT/triton_wgmma.log 2>&1
grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |Failure|verdict|status" $OUT/triton_wgmma.log | head -40
timeout -s KILL 300 build/bin/ptxbench_gpu_tests --gtest_filter='TritonVerdicts.GemmSuite*:TritonVerdicts.AttentionForward*' > $OUT/triton_suites.log 2>&1
grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |Failure|PASSED|INCORRECT|BANNED|ERROR" $OUT/triton_suites.log | head -60

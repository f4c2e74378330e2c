#!/usr/bin/env bash
# Session 11 call 5: the Triton GEMM through the evaluator again, with the runner's TRITON_LIBCUDA_PATH found by the loader.
R=$OUT; mkdir -p /tmp/out; export OUT=/tmp/out
trap 'tar czf $R/call5.tgz -C /tmp/out .' EXIT
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c5
export PTXBENCH_PYTHON=/opt/torch/.venv/bin/python3 PTXBENCH_TEST_OUT=$OUT
timeout -s KILL 100 build/bin/ptxbench_gpu_tests --gtest_filter='TritonVerdicts.TheTritonGemmExecutesWgmma' > $OUT/triton_wgmma.log 2>&1
grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |Failure|status|speedup" $OUT/triton_wgmma.log | head -30
python3 -c "
import json; v=json.load(open('$OUT/triton_gemm_tl_dot_sass.verdict.json')); print(v['status'], v.get('speedup')); print(v['message'][-1500:]); print(json.dumps(v.get('target_instruction'))[:400])" 2>&1 | head -40

#!/usr/bin/env bash
# GPU call 3 of session 10 (results/h200.md, "session 10"), kept as it ran (carried: .devcarry/{bin,lib},
# .devcarry/opencode.xz = opencode-ai 1.18.33's Linux binary, xz-compressed). Logs go to /tmp/out,
# returned as one tarball.
#  1. the new expert GEMM: three full evaluations at M = 8192, then knob variants (timing only);
#  2. GPU tests: the expert suites (every expert's full evaluation), the pack templates;
#  3. issue 20 on the GPU: one opencode trajectory against the real service, its refinement run, the report.
set -o pipefail
mkdir -p build/bin build/lib /tmp/out && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))'); export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c3
[ ! -e /work/main ] && mkdir -p /work && ln -s $PWD /work/main
O=/tmp/out; trap 'tar czf $OUT/call3.tgz -C $O .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,pci.bus_id --format=csv > $O/gpu.txt
S=scripts/gpu_calls/summarize_verdicts.py; P=build/bin/ptxbench; d=gemm_n7168_k5120; E="--no-sanitize --no-profile --json"
X=knowledge/hopper/experts/gemm_n7168_k5120.cu
echo "== 1. expert GEMM, 3 full evaluations"
timeout 120 $P eval $d $X --repeat 3 --json > $O/expert3.jsonl 2>>$O/err.log; python3 $S < $O/expert3.jsonl
mkdir -p /tmp/k
sed 's/GROUP_P = 8,/GROUP_P = 4,/' $X > /tmp/k/g4.cu; sed 's/GROUP_P = 8,/GROUP_P = 16,/' $X > /tmp/k/g16.cu
sed 's/^constexpr int EPI_PANELS = 2;/constexpr int EPI_PANELS = 1;/' $X > /tmp/k/p1.cu
for r in 1 2; do for k in g4 g16 p1; do timeout 60 $P eval $d /tmp/k/$k.cu $E >> $O/knob_$k.jsonl 2>>$O/err.log; done
  timeout 60 $P eval $d $X $E >> $O/knob_base.jsonl 2>>$O/err.log; done
for k in base g4 g16 p1; do echo "-- $k"; python3 $S < $O/knob_$k.jsonl; done
echo "== 2. GPU tests"
timeout 200 build/bin/ptxbench_gpu_tests --gtest_filter='FixtureVerdicts.ExpertKernelsPassWithTheirMechanisms' > $O/experts_test.log 2>&1; echo rc=$?
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure|expected|speedup" $O/experts_test.log | head -20
echo "== 3. agent on the GPU"
mkdir -p /tmp/agents/node_modules/.bin && xz -dc .devcarry/opencode.xz > /tmp/agents/node_modules/.bin/opencode && chmod +x /tmp/agents/node_modules/.bin/opencode
PTXBENCH_AGENT_CLI_DIR=/tmp/agents PTXBENCH_GPU_TEST_OUT=$O/agent timeout 300 build/bin/ptxbench_gpu_tests --gtest_filter='AgentOnGpu.*' > $O/agent_test.log 2>&1; echo rc=$?
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" $O/agent_test.log | head; cat $O/agent/stored_turns.txt 2>/dev/null; head -40 $O/agent/comparison.txt 2>/dev/null
tail -3 $O/err.log

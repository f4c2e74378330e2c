# Sourced by the device-call scripts (session 12 on): the carried binaries into build/, the
# environment the tools need on the GPU host, a scratch output folder packed into $OUT/NAME.tgz at
# exit (the device returns few files), the GPU's state, and two clocks for the script's steps.
#   source scripts/gpu_calls/device_env.sh NAME [BUDGET_S]
#   el: "[seconds since start]"; left: seconds left of BUDGET_S (default 575)
mkdir -p build/bin build/lib /tmp/out && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
if sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))' 2>/dev/null); then
  export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH PATH=/usr/local/cuda/bin:$PATH
export PTXBENCH_HOME=$PWD PTXBENCH_CACHE_DIR=$PWD/.cache/$1 PTXBENCH_PYTHON=/opt/torch/.venv/bin/python3
O=/tmp/out
export PTXBENCH_TEST_OUT=$O
trap "tar czf \$OUT/$1.tgz -C $O ." EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,pci.bus_id --format=csv > $O/gpu.txt
P=build/bin/ptxbench
t0=$(date +%s)
budget=${2:-575}
el() { echo "[$(( $(date +%s) - t0 )) s]"; }
left() { echo $(( budget - ($(date +%s) - t0) )); }
# The newest run id of the run store FILE ("" when none).
newest_run() { $P run --list --json --store "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["id"] if r else "")'; }
# The Triton GEMM's wgmma test (TritonVerdicts.TheTritonGemmExecutesWgmma); 0 when it passed.
triton_wgmma_test() {
  timeout -s KILL 110 build/bin/ptxbench_gpu_tests --gtest_filter='TritonVerdicts.TheTritonGemmExecutesWgmma' > $O/triton_wgmma.log 2>&1
  echo "wgmma test rc=$?"
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) |Failure|\[triton\]|warm-up" $O/triton_wgmma.log | head -20
  grep -q "^\[       OK \]" $O/triton_wgmma.log && return 0
  grep -o "TRITON_LIBCUDA_PATH.*" $O/triton_wgmma.log | head -2
  tail -c 1500 $O/triton_wgmma.log
  return 1
}
# The expert policy in Triton, then the report of run MAIN (the store's CUDA run) beside it.
triton_expert_run() {
  timeout "$1" $P run --config configs/expert_triton.json --store $O/runs.db --runs-dir $O/runs > $O/triton_run.log 2>&1
  echo "triton run rc=$? $(el)"
  tail -6 $O/triton_run.log
  local tr; tr=$(newest_run $O/runs.db)
  $P report "$2" "$tr" --store $O/runs.db --html $O/lang_report.html --csv $O/lang_report.csv --json $O/lang_report.json > $O/lang_report.txt 2>&1
  grep -n -i -B2 -A12 "language" $O/lang_report.txt | head -60
}

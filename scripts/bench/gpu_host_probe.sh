#!/usr/bin/env bash
# shellcheck disable=SC2010  # listing the names of libraries and headers is what this probe does
# What a GPU host offers ptxbench, in one run: the CUDA tools and libraries found, the ncu metrics
# for SASS counts on gh100 and how they count an instruction predicated off at run time (the kernel
# `pred` of gpu_host_probe.cu: the warp count sees its FFMA, the predicate-true thread count does
# not; the CSV line of that run is tests/data/ncu_probe_pred.csv, docs/verdict.md "Mechanisms"),
# CUDA IPC between two processes, also inside a network namespace, and PyTorch's cuDNN.
#   OUT=/tmp/probe scripts/bench/gpu_host_probe.sh        # log in $OUT/probe.log (default /tmp/ptxbench-probe)
# Needs nvcc and ncu (CUDA toolkit under /usr/local/cuda or on PATH) and an sm_90a GPU.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-/tmp/ptxbench-probe}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
work=$(mktemp -d /tmp/ptxbench-probe.XXXXXX)
exec > >(tee "$OUT/probe.log") 2>&1
set -x
nvidia-smi; nvidia-smi -q | grep -iE "clocks|throttle|power limit" | head -20
which nvcc ncu compute-sanitizer cuobjdump nvdisasm nm readelf python3 cmake ninja unshare redis-server
ncu --version; compute-sanitizer --version | head -3; nvcc --version | tail -2
ls /usr/local/cuda/lib64 | grep -E "cupti|cublas|cudnn|nvperf" ; ls /usr/local/cuda/extras/CUPTI/lib64 2>/dev/null | head
ldconfig -p | grep -E "fmt|spdlog|sqlite|gtest|curl|cudnn|nvidia-ml|libcuda\.|cupti"
ls /usr/include | grep -iE "CLI|fmt|spdlog|nlohmann|sqlite|gtest|curl|httplib"
python3 -c "import torch; print(torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
ls /usr/local/cuda/extras/CUPTI/samples 2>/dev/null | head -50
ncu --query-metrics --chip gh100 2>&1 | grep -iE "sass|opcode|pred" | head -60
ncu --query-metrics-mode suffix --metrics sass__inst_executed_per_opcode --chip gh100 2>&1 | head -20
p=$work/gpu_host_probe
nvcc -O2 -gencode arch=compute_90a,code=sm_90a -o "$p" "$root/scripts/bench/gpu_host_probe.cu" && "$p" "$p"
unshare -n "$p" "$p"; echo "unshare rc=$?"
for m in sass__inst_executed_per_opcode sass__thread_inst_executed_true_per_opcode sass__inst_executed_per_opcode_with_pred_on smsp__sass_thread_inst_executed_op_pred_on; do
  timeout 60 ncu --clock-control none --metrics $m --print-metric-instances details --kernel-name pred "$p" "$p" 2>&1 | tail -8
done
timeout 60 ncu --clock-control none --metrics sass__inst_executed_per_opcode,sass__thread_inst_executed_true_per_opcode --print-metric-instances details --csv --print-kernel-base mangled --kernel-name pred "$p" "$p" 2>&1 | tail -6
cp /usr/local/cuda/extras/CUPTI/samples/sass_metrics/*.cpp "$OUT/" 2>/dev/null
rm -rf "$work"

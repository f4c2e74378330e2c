#!/usr/bin/env bash
# One-call probe of the GPU host: tools, libraries, metric names, IPC, namespaces. Writes to $OUT/probe.log.
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
cd scripts/probe && nvcc -O2 -gencode arch=compute_90a,code=sm_90a -o probe probe.cu && ./probe ./probe
unshare -n ./probe ./probe; echo "unshare rc=$?"
for m in sass__inst_executed_per_opcode sass__thread_inst_executed_true_per_opcode sass__inst_executed_per_opcode_with_pred_on smsp__sass_thread_inst_executed_op_pred_on; do
  timeout 60 ncu --clock-control none --metrics $m --print-metric-instances details --kernel-name pred ./probe ./probe 2>&1 | tail -8
done
timeout 60 ncu --clock-control none --metrics sass__inst_executed_per_opcode,sass__thread_inst_executed_true_per_opcode --print-metric-instances details --csv --print-kernel-base mangled --kernel-name pred ./probe ./probe 2>&1 | tail -6
cp /usr/local/cuda/extras/CUPTI/samples/sass_metrics/*.cpp "$OUT/" 2>/dev/null

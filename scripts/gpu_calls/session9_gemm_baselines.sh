#!/usr/bin/env bash
# GPU call of session 9 (results/h200.md, "session 9"), kept as it ran: run on the device from the
# repository root with the stripped binaries carried in .devcarry/{bin,lib} (NOTES.md; .devcarry/old
# holds those of the 'before' commit); $OUT receives the logs.
set -o pipefail
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/j LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,pci.bus_id --format=csv > $OUT/gpu.txt
for d in $(build/bin/ptxbench definitions list --set gemm17 --json | python3 -c 'import json,sys; print(" ".join(x["name"] for x in json.load(sys.stdin)))'); do
  timeout 40 build/bin/ptxbench eval $d --builtin cublaslt --no-sanitize --no-profile --trials 1 --seed 1 --json >> $OUT/gemm.jsonl 2>>$OUT/err.log
done
python3 - <<'P'
import json, os
for l in open(os.environ['OUT'] + '/gemm.jsonl'):
    v = json.loads(l)
    t = (v.get('stages') or {}).get('timing') or {}
    print(v['definition'], v.get('workload_label') or v.get('workload_uuid'), v['status'], 'cuBLASLt', round(v['baseline_us'] or 0, 1), 'us  A/A', round(v['speedup'] or 0, 4))
P
tail -2 $OUT/err.log

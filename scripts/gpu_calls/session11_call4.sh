#!/usr/bin/env bash
# Session 11 call 4: the Redis queue on the H200 — the GEMM fixture suite through SQLite, then Redis.
R=$OUT; mkdir -p /tmp/out; export OUT=/tmp/out
trap 'tar czf $R/call4.tgz -C /tmp/out .' EXIT
mkdir -p build/bin build/lib && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c4
nvidia-smi --query-gpu=pci.bus_id,name --format=csv > $OUT/gpu.txt
chmod +x .devcarry/redis/redis-server
RD=$PWD/.devcarry/redis; printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s/redis-server "$@"\n' "$RD" "$RD" > /tmp/redis-server; chmod +x /tmp/redis-server
OUT=$OUT/parity REDIS_SERVER=/tmp/redis-server COUNT=12 timeout -s KILL 560 bash scripts/gpu_calls/session11_redis_parity.sh 2>&1 | tee $OUT/parity_summary.txt

#!/usr/bin/env bash
# The service under load on a GPU host (issue 6): `ptxbench serve` on every GPU, the GEMM fixture
# suite submitted COUNT times from CLIENTS concurrent clients through the HTTP API, the service
# killed with SIGKILL after RESTART_AT verdicts and started again on the same queue. Every verdict
# must be the expected one; nothing lost or duplicated. Logs and the summary go to $OUT.
#   COUNT=200 CLIENTS=8 WORKERS_PER_GPU=4 RESTART_AT=60 TRIALS=1 scripts/service_load.sh
# Multi-GPU (issue 8): GPUS=N uses the first N GPUs; KILL_WORKER_AT=K kills the workers of the
# last GPU with SIGKILL after K verdicts (their tasks must be re-run elsewhere, the others go on).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/ptxbench-out}
BIN=${PTXBENCH_BIN:-build/bin}
COUNT=${COUNT:-200}
CLIENTS=${CLIENTS:-8}
WORKERS_PER_GPU=${WORKERS_PER_GPU:-4}
RESTART_AT=${RESTART_AT:-60}
KILL_WORKER_AT=${KILL_WORKER_AT:-0}
TRIALS=${TRIALS:-1}
GPUS=${GPUS:-auto}
PORT=${PORT:-18742}
SUITES=${SUITES:-tests/fixtures/gemm/suite.json}
mkdir -p "$OUT"
db=$(mktemp -d)/service.db
url=http://127.0.0.1:$PORT
serve_log=$OUT/serve.log
http_get() {  # URL [FILE]: body to FILE (or nowhere); fails unless 2xx
  python3 - "$@" <<'PY'
import sys, urllib.request
try:
    body = urllib.request.urlopen(sys.argv[1], timeout=5).read()
except Exception as e:
    body = getattr(e, "read", lambda: str(e).encode())(); ok = False
else:
    ok = True
if len(sys.argv) > 2: open(sys.argv[2], "wb").write(body)
sys.exit(0 if ok else 1)
PY
}

start_service() {
  local gpus=(--gpus "$GPUS")
  [ -n "${FAKE_GPUS:-}" ] && gpus=(--fake-gpus "$FAKE_GPUS")  # mechanics only: fake verdicts won't match
  "$BIN/ptxbench" serve --listen 127.0.0.1:$PORT --db "$db" "${gpus[@]}" --workers-per-gpu "$WORKERS_PER_GPU" \
    --sanitize-timeout 8 --call-timeout 5 --lease 60 >> "$serve_log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 1 600); do
    http_get "$url/v1/health" && return 0
    sleep 0.1
  done
  echo "service did not become healthy"; return 1
}

: > "$OUT/load.log"  # the driver appends (O_APPEND), so the script's own lines stay in order
echo "== $(date -u +%T) start: $COUNT submissions, $CLIENTS clients, $WORKERS_PER_GPU workers/GPU, gpus=$GPUS" | tee -a "$serve_log"
start_service
http_get "$url/v1/health" "$OUT/health_start.json"
"$BIN/ptxbench" suite load $SUITES --service "$url" --count "$COUNT" --clients "$CLIENTS" --trials "$TRIALS" \
  --outage 120 --timeout 900 --out "$OUT/load.jsonl" >> "$OUT/load.log" 2>&1 &
load_pid=$!
# Host and GPU load every 5 s: where the time goes when the GPUs are not the limit.
( echo "time,load1,gpu_util_percent"
  while kill -0 $load_pid 2>/dev/null; do
    util=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null | paste -sd'|' -)
    echo "$(date -u +%T),$(cut -d' ' -f1 /proc/loadavg),${util:-n/a}"
    sleep 5
  done ) > "$OUT/host_samples.csv" &
sampler_pid=$!
verdicts() { grep -cE '^\[load\] +[0-9]+/' "$OUT/load.log"; }
if [ "$KILL_WORKER_AT" -gt 0 ]; then
  while kill -0 $load_pid 2>/dev/null && [ "$(verdicts)" -lt "$KILL_WORKER_AT" ]; do sleep 0.2; done
  if [ "$GPUS" != auto ]; then n=$GPUS; elif [ -n "${FAKE_GPUS:-}" ]; then n=$FAKE_GPUS; else n=$(nvidia-smi -L | wc -l); fi
  last=$(( n - 1 ))
  pids=$(pgrep -f "ptxbench worker .*--device $last( |\$)" | tr '\n' ' ')
  echo "== $(date -u +%T) kill -9 of GPU $last's workers ($pids) after $(verdicts) verdicts" | tee -a "$serve_log" "$OUT/load.log"
  [ -n "$pids" ] && kill -9 $pids
fi
if [ "$RESTART_AT" -gt 0 ]; then
  while kill -0 $load_pid 2>/dev/null && [ "$(verdicts)" -lt "$RESTART_AT" ]; do sleep 0.2; done
  echo "== $(date -u +%T) kill -9 of the service (pid $serve_pid) after $(verdicts) verdicts" | tee -a "$serve_log" "$OUT/load.log"
  kill -9 $serve_pid
  sleep 2
  start_service
  echo "== $(date -u +%T) service restarted (pid $serve_pid)" | tee -a "$serve_log" "$OUT/load.log"
fi
wait $load_pid
rc=$?
kill $sampler_pid 2>/dev/null
http_get "$url/v1/health" "$OUT/health_end.json"
http_get "$url/metrics" "$OUT/metrics.txt"
alive=$(kill -0 $serve_pid 2>/dev/null && echo yes || echo no)
echo "== $(date -u +%T) load exit $rc; service alive at the end: $alive" | tee -a "$OUT/load.log"
kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null
exit $rc

#!/usr/bin/env bash
# Throughput of the multi-host service (issue 23) with fake GPUs: for 1, 2, 4 and 8 "hosts" (a host
# = WORKERS_PER_HOST `ptxbench worker --queue redis://... --fake --host NAME` processes) behind one
# front `ptxbench serve --queue redis://... --gpus 0`, all on one loopback Redis (AOF, ACL user),
# `ptxbench suite load` submits COUNT_PER_WORKER tasks per worker from CLIENTS_PER_WORKER clients per
# worker; each fake evaluation takes FAKE_SECONDS. Reports evaluations per minute and the
# efficiency rate / (hosts x rate of 1 host) as a markdown table ($OUT/multihost_throughput.md).
# A benchmark, not a test: it fails only when a phase cannot run or a verdict is not as expected.
#   scripts/bench/multihost_throughput.sh
#   HOSTS_LIST="1 2 4 8" WORKERS_PER_HOST=2 FAKE_SECONDS=0.2 COUNT_PER_WORKER=40 CLIENTS_PER_WORKER=3 \
#     APPENDFSYNC=always PTXBENCH_BIN=build/bin OUT=/tmp/ptxbench-multihost scripts/bench/multihost_throughput.sh
# Every host runs on this machine, so past a few hosts the CPU (not the queue) may be the limit:
# the table gives the host's cores and load beside the rates.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
OUT=${OUT:-/tmp/ptxbench-multihost}
BIN=${PTXBENCH_BIN:-build/bin}
[ -d "$BIN" ] || BIN=$(dirname "$BIN")  # the executable itself is accepted too
HOSTS_LIST=${HOSTS_LIST:-1 2 4 8}
WORKERS_PER_HOST=${WORKERS_PER_HOST:-2}
FAKE_SECONDS=${FAKE_SECONDS:-0.2}
COUNT_PER_WORKER=${COUNT_PER_WORKER:-40}
CLIENTS_PER_WORKER=${CLIENTS_PER_WORKER:-3}
LEASE=${LEASE:-10}
APPENDFSYNC=${APPENDFSYNC:-always}
START_TIMEOUT_S=${START_TIMEOUT_S:-60}
export PTXBENCH_HOME=${PTXBENCH_HOME:-$root}

command -v redis-server >/dev/null || { echo "redis-server is not installed (scripts/setup.sh installs it)"; exit 2; }
command -v redis-cli >/dev/null || { echo "redis-cli is not installed (Debian package redis-tools)"; exit 2; }
[ -x "$BIN/ptxbench" ] || { echo "no ptxbench at $BIN/ptxbench (set PTXBENCH_BIN)"; exit 2; }
mkdir -p "$OUT"
work=$(mktemp -d /tmp/ptxbench-mhbench.XXXXXX)
export PTXBENCH_CACHE_DIR=$work/cache
pids=()  # every process this script started, killed by pid at the end of each phase and on exit
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  pids=()
}
trap 'cleanup; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
http_get() {  # URL [FILE]: body to FILE (or nowhere); fails unless 2xx
  python3 - "$@" <<'PY'
import sys, urllib.request
try:
    body = urllib.request.urlopen(sys.argv[1], timeout=5).read(); ok = True
except Exception as e:
    body = getattr(e, "read", lambda: str(e).encode())(); ok = False
if len(sys.argv) > 2: open(sys.argv[2], "wb").write(body)
sys.exit(0 if ok else 1)
PY
}
healthy_workers() {  # URL: how many workers /v1/health calls healthy (any HTTP status)
  python3 - "$1" <<'PY'
import json, sys, urllib.request, urllib.error
try:
    body = urllib.request.urlopen(sys.argv[1] + "/v1/health", timeout=5).read()
except urllib.error.HTTPError as e:
    body = e.read()
except Exception:
    print(0); sys.exit()
try:
    print(sum(1 for w in json.loads(body).get("workers", []) if w.get("state") == "healthy"))
except Exception:
    print(0)
PY
}

# The fake suite: every case takes FAKE_SECONDS, the verdicts varied.
suite=$work/suite
mkdir -p "$suite"
echo "// PTXB_FAKE_SECONDS=$FAKE_SECONDS PTXB_FAKE_SPEEDUP=1.1" > "$suite/pass.cu"
echo "// PTXB_FAKE_SECONDS=$FAKE_SECONDS PTXB_FAKE_STATUS=INCORRECT_NUMERICAL" > "$suite/numerics.cu"
echo "// PTXB_FAKE_SECONDS=$FAKE_SECONDS PTXB_FAKE_STATUS=COMPILE_ERROR" > "$suite/compile.cu"
cat > "$suite/suite.json" <<'JSON'
{"definition": "gemm_n7168_k5120",
 "description": "Fake-GPU cases for the multi-host throughput benchmark (no GPU used).",
 "cases": [
  {"name": "fake_pass", "file": "pass.cu", "expect": {"status": "PASSED"}},
  {"name": "fake_numerics", "file": "numerics.cu", "expect": {"status": "INCORRECT_NUMERICAL"}},
  {"name": "fake_compile", "file": "compile.cu", "expect": {"status": "COMPILE_ERROR"}}]}
JSON

rc=0
for hosts in $HOSTS_LIST; do
  phase=$OUT/hosts$hosts
  rm -rf "$phase"; mkdir -p "$phase"
  workers=$((hosts * WORKERS_PER_HOST))
  count=$((COUNT_PER_WORKER * workers))
  clients=$((CLIENTS_PER_WORKER * workers))
  echo "== $(date -u +%T) $hosts host(s) x $WORKERS_PER_HOST workers: $count submissions from $clients clients" | tee -a "$OUT/bench.log"

  # A fresh Redis per phase (AOF on, an ACL user; the default user locked, as docs/service.md says).
  rdir=$work/redis$hosts
  mkdir -p "$rdir"
  rport=$(free_port)
  password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  printf '%s\n' "$password" > "$rdir/password"; chmod 600 "$rdir/password"
  printf 'user default on >%s ~* &* +@all\nuser ptxbench on >%s ~* &* +@all\n' \
    "$(python3 -c 'import secrets; print(secrets.token_hex(16))')" "$password" > "$rdir/users.acl"
  printf 'bind 127.0.0.1\nport %s\nprotected-mode yes\ndaemonize no\ndir %s\nlogfile %s\naclfile %s\nappendonly yes\nappendfsync %s\nsave ""\n' \
    "$rport" "$rdir" "$phase/redis.log" "$rdir/users.acl" "$APPENDFSYNC" > "$rdir/redis.conf"
  redis-server "$rdir/redis.conf" & pids+=($!)
  for _ in $(seq 1 200); do
    [ "$(redis-cli -h 127.0.0.1 -p "$rport" --user ptxbench --pass "$password" --no-auth-warning ping 2>/dev/null)" = PONG ] && break
    sleep 0.1
  done
  queue=(--queue "redis://ptxbench@127.0.0.1:$rport?prefix=bench-h$hosts" --redis-password-file "$rdir/password")

  port=$(free_port)
  url=http://127.0.0.1:$port
  "$BIN/ptxbench" serve "${queue[@]}" --listen 127.0.0.1:$port --gpus 0 --lease "$LEASE" > "$phase/serve.out" 2> "$phase/serve.log" &
  serve_pid=$!; pids+=($serve_pid)
  for h in $(seq 1 "$hosts"); do
    for d in $(seq 0 $((WORKERS_PER_HOST - 1))); do
      "$BIN/ptxbench" worker "${queue[@]}" --device "$d" --fake --host "host$h" --lease "$LEASE" \
        2> "$phase/worker-host$h-gpu$d.log" & pids+=($!)
    done
  done
  ready=no
  for _ in $(seq 1 $((START_TIMEOUT_S * 5))); do
    kill -0 $serve_pid 2>/dev/null || break
    if http_get "$url/v1/definitions" && [ "$(healthy_workers "$url")" -ge "$workers" ]; then ready=yes; break; fi
    sleep 0.2
  done
  http_get "$url/v1/health" "$phase/health_start.json"

  write_phase() {  # LOAD_RC LOAD1_BEFORE LOAD1_AFTER
    printf '{"hosts": %s, "workers_per_host": %s, "workers": %s, "count": %s, "clients": %s, "fake_seconds": %s, "load_rc": %s, "load1_before": %s, "load1_after": %s, "cores": %s, "appendfsync": "%s"}\n' \
      "$hosts" "$WORKERS_PER_HOST" "$workers" "$count" "$clients" "$FAKE_SECONDS" "$1" "$2" "$3" "$(nproc)" "$APPENDFSYNC" \
      > "$phase/phase.json"
  }
  if [ $ready != yes ]; then
    why="not ready within ${START_TIMEOUT_S} s: $(healthy_workers "$url") of $workers workers healthy"
    kill -0 $serve_pid 2>/dev/null || why="serve exited: $(head -c 300 "$phase/serve.log")"
    echo "   $why; see $phase/*.log" | tee -a "$OUT/bench.log"
    write_phase -1 0 0
    cleanup; rc=1; continue
  fi
  load1_before=$(cut -d' ' -f1 /proc/loadavg)
  "$BIN/ptxbench" suite load "$suite/suite.json" --service "$url" --count "$count" --clients "$clients" \
    --key-prefix "bench-h$hosts-$$" --timeout 600 --outage 60 --out "$phase/load.jsonl" > "$phase/load.log" 2>&1
  load_rc=$?
  load1_after=$(cut -d' ' -f1 /proc/loadavg)
  http_get "$url/v1/health" "$phase/health_end.json"
  http_get "$url/metrics" "$phase/metrics.txt" || http_get "$url/v1/metrics" "$phase/metrics.txt"
  write_phase "$load_rc" "$load1_before" "$load1_after"
  tail -n 2 "$phase/load.log" | tee -a "$OUT/bench.log"
  [ $load_rc = 0 ] || rc=1
  cleanup
done

python3 "$root/scripts/bench/multihost_summary.py" "$OUT" > "$OUT/multihost_throughput.md" || rc=1
cat "$OUT/multihost_throughput.md"
exit $rc

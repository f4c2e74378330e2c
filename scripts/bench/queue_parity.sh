#!/usr/bin/env bash
# Queue parity (issue 23): the same fixture suite through the SQLite path (`serve --db`, its own
# worker on GPU 0), then through the Redis path (a front `serve --queue redis://… --gpus 0` and a
# standalone `ptxbench worker --queue redis://… --device 0`), same binaries, same run. Every
# verdict must be the suite's expected one on both paths, and the per-case median speedups should
# agree within 1% (a case that spreads by itself, like stdout_flood, needs several evaluations per
# case: give a suite of the speed cases and COUNT = 4 × its cases). Logs and both summaries go to
# $OUT; the comparison is printed (results/multihost.md, "Parity on the H200").
#   REDIS_SERVER=path/to/redis-server COUNT=12 OUT=/tmp/ptxbench-parity scripts/bench/queue_parity.sh
#   SUITE=tests/fixtures/gemm/suite.json, PTXBENCH_BIN=build/bin, WORKER_HOST=$(hostname -s) (defaults)
# Needs one GPU, redis-server (Debian's redis-server package; scripts/setup.sh installs it) and the
# ports 18801, 18802 and 18900 on the loopback free.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
export PTXBENCH_HOME=$root
BIN=${PTXBENCH_BIN:-build/bin}
OUT=${OUT:-/tmp/ptxbench-parity}
COUNT=${COUNT:-12}
RS=${REDIS_SERVER:-redis-server}
SUITE=${SUITE:-tests/fixtures/gemm/suite.json}
mkdir -p "$OUT"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
wait_http() {  # PORT: until /v1/health answers (any status), 30 s at most
  for _ in $(seq 300); do
    python3 -c "import urllib.request,sys
try: urllib.request.urlopen('http://127.0.0.1:$1/v1/health', timeout=1)
except urllib.error.HTTPError: pass
except Exception: sys.exit(1)" && return 0
    sleep 0.1
  done
  echo "service on port $1 did not come up" >&2; return 1
}
load() {  # NAME PORT
  "$BIN/ptxbench" suite load "$SUITE" --service "http://127.0.0.1:$2" --count "$COUNT" --clients 4 --timeout 300 \
    --out "$OUT/$1.jsonl" --json > "$OUT/$1.summary.json" 2> "$OUT/$1.load.log"
  echo "$1: suite load exit $?"
}

# 1. SQLite.
"$BIN/ptxbench" serve --db "$work/sqlite.db" --gpus 1 --listen 127.0.0.1:18801 > "$OUT/serve_sqlite.log" 2>&1 &
pids+=($!)
wait_http 18801 && load sqlite 18801
cleanup; pids=()

# 2. Redis: a private redis-server (loopback, AOF always, an ACL user with a password file).
mkdir -p "$work/redis"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/redis.password"
printf 'user default on >%s ~* &* +@all\nuser ptxbench on >%s ~* &* +@all\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
  "$(cat "$work/redis.password")" > "$work/redis/users.acl"
printf 'port 18900\nbind 127.0.0.1\ndir %s\naclfile %s\nappendonly yes\nappendfsync always\nsave ""\n' \
  "$work/redis" "$work/redis/users.acl" > "$work/redis/redis.conf"
"$RS" "$work/redis/redis.conf" > "$OUT/redis.log" 2>&1 &
pids+=($!)
sleep 0.5
Q="redis://ptxbench@127.0.0.1:18900?prefix=parity"
"$BIN/ptxbench" serve --queue "$Q" --redis-password-file "$work/redis.password" --gpus 0 --listen 127.0.0.1:18802 \
  > "$OUT/serve_redis.log" 2>&1 &
pids+=($!)
"$BIN/ptxbench" worker --queue "$Q" --redis-password-file "$work/redis.password" --device 0 --host "${WORKER_HOST:-$(hostname -s)}" \
  > "$OUT/worker_redis.log" 2>&1 &
pids+=($!)
wait_http 18802 && load redis 18802
python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:18802/v1/health').read().decode())" \
  > "$OUT/redis_health.json" 2>&1
cleanup

python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
s = {k: json.load(open(f"{out}/{k}.summary.json")) for k in ("sqlite", "redis")}
for k, v in s.items():
    print(f"{k}: {v['submissions']} submissions, {v['as_expected']} as expected, {v['lost']} lost, "
          f"{v['distinct_task_ids']} tasks, by worker {v['finished_by_worker']}, {v['wall_s']:.0f} s")
    for w in v["not_as_expected"]: print("   not as expected:", w)
a, b = s["sqlite"]["speedup_by_case"], s["redis"]["speedup_by_case"]
worst = 0.0
for case in sorted(set(a) | set(b)):
    ma, mb = a.get(case, {}).get("median", 0), b.get(case, {}).get("median", 0)
    d = mb / ma - 1 if ma and mb else float("inf")
    worst = max(worst, abs(d))
    print(f"  {case:40s} sqlite {ma:.4f}  redis {mb:.4f}  {100 * d:+.2f}%")
print(f"largest median speedup difference: {100 * worst:.2f}% ({'within' if worst <= 0.01 else 'NOT within'} 1%)")
PY

#!/usr/bin/env bash
# Our HTTP server against the same interface on Debian 12's cpp-httplib 0.11
# (results/http_server_library.md): builds http_load twice (src/service/http_server.cpp;
# http_server_httplib.cpp here, linked to libcpp-httplib.so), runs each load shape REPEATS times,
# the two servers alternating, and prints the medians. Then runs tests/cpu/service/test_http_server.cpp,
# unchanged, against both (each test alone), and probe.py's malformed requests against both.
# SERVICE=1 then relinks build/bin/ptxbench with the port in place of http_server.cpp.o and runs
# scripts/service_load.sh with fake GPUs on both binaries, alternating, SERVICE_REPEATS times (each
# variant on a port of its own: see results/http_server_library.md).
# Needs g++, libgtest-dev, nlohmann-json3-dev and libcpp-httplib-dev (not in scripts/setup.sh: only
# this measurement uses it); SERVICE=1 needs build/ built (scripts/setup.sh).
#   REPEATS=5 SERVICE=1 OUT=/tmp/http-lib scripts/bench/http_server_library/run.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
here=$root/scripts/bench/http_server_library
OUT=${OUT:-/tmp/ptxbench-http-library}
REPEATS=${REPEATS:-5}
mkdir -p "$OUT/obj"
cxx() { g++ -std=c++20 -O2 -I"$root/src" -I"$root/tests" "$@"; }
o=$OUT/obj
# Our server: http_server.cpp and the parser, writer, socket and syntax files it is split into.
own_parts=(http_server http_request_parser http_response_writer http_socket http_syntax)
for f in common/error common/fs common/subprocess "${own_parts[@]/#/service/}"; do
  cxx -c "$root/src/$f.cpp" -o "$o/$(basename $f).o"
done
own=("${own_parts[@]/#/$o/}"); own=("${own[@]/%/.o}")
cxx -c "$here/http_server_httplib.cpp" -o "$o/httplib_port.o"
cxx -c "$here/http_load.cpp" -o "$o/http_load.o"
cxx -c "$root/tests/cpu/service/test_http_server.cpp" -o "$o/test_http_server.o"
cxx -c "$here/probe_server.cpp" -o "$o/probe_server.o"
g++ -o "$OUT/load_own" "$o/http_load.o" "${own[@]}" "$o/error.o" -pthread
g++ -o "$OUT/load_httplib" "$o/http_load.o" "$o/httplib_port.o" "$o/error.o" -lcpp-httplib -pthread
g++ -o "$OUT/probe_own" "$o/probe_server.o" "${own[@]}" "$o/error.o" -pthread
g++ -o "$OUT/probe_httplib" "$o/probe_server.o" "$o/httplib_port.o" "$o/error.o" -lcpp-httplib -pthread
g++ -o "$OUT/test_own" "$o/test_http_server.o" "${own[@]}" "$o/error.o" "$o/fs.o" "$o/subprocess.o" \
  -lgtest -lgtest_main -pthread
g++ -o "$OUT/test_httplib" "$o/test_http_server.o" "$o/httplib_port.o" "$o/error.o" "$o/fs.o" "$o/subprocess.o" \
  -lcpp-httplib -lgtest -lgtest_main -pthread

# CLIENTS REQUESTS MODE [IDLE] (http_load.cpp): keep-alive clients as `ptxbench suite load` and the
# agent are, connected when the clock starts or before; one connection per request as curl in a loop;
# and 8 clients beside 64 idle keep-alive connections (as many as `serve` has threads).
shapes=("8 5000 warm" "64 500 warm" "64 500 keepalive" "8 1000 close" "32 250 close" "8 500 keepalive 64")
: > "$OUT/load.jsonl"
for ((r = 1; r <= REPEATS; r++)); do
  for shape in "${shapes[@]}"; do
    for server in own httplib; do
      # shellcheck disable=SC2086
      line=$("$OUT/load_$server" $shape) || true
      echo "{\"server\":\"$server\",\"repeat\":$r,\"load1\":$(cut -d' ' -f1 /proc/loadavg),${line#\{}" | tee -a "$OUT/load.jsonl"
    done
  done
done
python3 - "$OUT/load.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r["clients"], r["mode"], r["idle_connections"]) for r in rows}, key=lambda k: (k[2], k[1], k[0]))
names = {"warm": "keep-alive, opened before", "keepalive": "keep-alive, opened at start", "close": "one per request"}
print("| clients | connections | idle | server | requests/s (median) | p50 ms | p95 ms | p99 ms | max ms (worst run) | failed |")
print("|---|---|---|---|---|---|---|---|---|---|")
for clients, mode, idle in keys:
    for server in ("own", "httplib"):
        rs = [r for r in rows if (r["clients"], r["mode"], r["idle_connections"]) == (clients, mode, idle) and r["server"] == server]
        med = lambda k: statistics.median(r[k] for r in rs)
        print(f"| {clients} | {names[mode]} | {idle} | {server} | {med('requests_per_s'):.0f} | "
              f"{med('p50_ms'):.2f} | {med('p95_ms'):.2f} | {med('p99_ms'):.2f} | {max(r['max_ms'] for r in rs):.0f} | "
              f"{sum(r['failed'] for r in rs)} |")
PY
: > "$OUT/tests.txt"
echo "== tests/cpu/service/test_http_server.cpp against each server (each test alone, 60 s at most)"
for server in own httplib; do
  for t in $("$OUT/test_$server" --gtest_list_tests | awk '/^[^ ]/ {s=$1} /^  / {print s $1}'); do
    if timeout 60 "$OUT/test_$server" --gtest_filter="$t" > "$OUT/test_${server}_$t.txt" 2>&1; then r=passed
    elif [ $? = 124 ]; then r="hung (killed after 60 s)"; else r=failed; fi
    echo "$server $t $r" | tee -a "$OUT/tests.txt"
  done
done
echo "== malformed and oversized requests (probe.py)"
python3 "$here/probe.py" "$OUT/probe_own" "$OUT/probe_httplib" | tee "$OUT/probe.md"

[ "${SERVICE:-0}" = 1 ] || exit 0
echo "== scripts/service_load.sh with fake GPUs, build/bin/ptxbench and the same relinked with the port"
svc=$OUT/service
mkdir -p "$svc/bin_own" "$svc/bin_httplib"
# serve starts its workers from its own folder, so each binary gets a folder of its own.
cp "$root/build/bin/ptxbench" "$svc/bin_own/ptxbench"
cp "$root/build/src/libptxbench_core.a" "$svc/libptxbench_core.a"
flags=$(python3 -c 'import json,sys; print(next(e["command"] for e in json.load(open(sys.argv[1])) if e["file"].endswith("service/http_server.cpp")))' \
  "$root/build/compile_commands.json")
flags=${flags#* }; flags=${flags%% -o *}
(cd "$root/build" && eval "g++ $flags -o $svc/http_server.cpp.o -c $here/http_server_httplib.cpp")
(cd "$svc" && ar d libptxbench_core.a "${own_parts[@]/%/.cpp.o}" && ar r libptxbench_core.a http_server.cpp.o)
link=$(cd "$root/build" && ninja -t commands bin/ptxbench | tail -n 1)
link=${link//src\/libptxbench_core.a/$svc\/libptxbench_core.a}
link=${link/-o bin\/ptxbench /-o $svc\/bin_httplib\/ptxbench }
link="${link% && :} -lcpp-httplib"
(cd "$root/build" && eval "$link")
: > "$svc/summary.txt"
for ((r = 1; r <= ${SERVICE_REPEATS:-3}; r++)); do
  # COUNT CLIENTS FAKE_GPUS RESTART_AT
  for shape in "200 8 2 0" "1000 64 4 0" "200 8 2 60"; do
    set -- $shape
    for v in own httplib; do
      # Its own port each: Debian's cpp-httplib cannot bind a port that still has TIME_WAIT
      # connections of a server without SO_REUSEPORT (ours).
      port=18901; [ $v = httplib ] && port=18902
      run=$svc/$v-c$1-k$2-x$4-r$r
      OUT=$run PTXBENCH_BIN=$svc/bin_$v FAKE_GPUS=$3 WORKERS_PER_GPU=4 COUNT=$1 CLIENTS=$2 RESTART_AT=$4 PORT=$port \
        timeout 600 "$root/scripts/service_load.sh" > "$run.log" 2>&1 || true  # fake verdicts never match: exit 1
      echo "$v count=$1 clients=$2 gpus=$3 restart_at=$4 r=$r load1=$(cut -d' ' -f1 /proc/loadavg) | $(grep -E '^PASSED' "$run/load.log" | tail -n 1) | $(grep -E 'evaluations/min' "$run/load.log" | tail -n 1)" | tee -a "$svc/summary.txt"
    done
  done
done

#!/usr/bin/env bash
# Evaluation throughput of one GPU (issue 37), a benchmark, not a test: `ptxbench serve` on one GPU
# with N worker processes (1, 2, 4, 8), fed by `ptxbench suite load` a mix whose statuses follow the
# original PTXBench release for the paper's four models on Hopper (scripts/bench/eval_throughput.py:
# PASSED 36% at the release's speeds, COMPILE_ERROR 19%, INCORRECT_NUMERICAL 18%, RUNTIME_ERROR 16%,
# TIMEOUT 11%; GEMM fixtures and the expert stand in for each, every source distinct). For each N:
#   cold  a fresh service on a fresh cache folder ($PTXBENCH_CACHE_DIR: compile cache, calibration,
#         scratch) and a fresh queue; every compile misses;
#   warm  the same mix again on the same service and cache; every compile hits, the workers' state is kept.
# Reports per phase evaluations/min (steady and overall), p50/p95 latency, each stage's share of the
# evaluation wall time and of lock waits, GPU busy share (nvidia-smi every 200 ms), and the bound the
# timing stage alone allows (60 / mean timing-stage wall: it holds the GPU alone):
# OUT/eval_throughput.json, OUT/eval_throughput.md (printed), per phase OUT/phases/w<N>-<cache>/.
#   scripts/bench/eval_throughput.sh --quick                 # workers 1,4, 6 submissions a phase
#   scripts/bench/eval_throughput.sh --workers 4 --out /tmp/et
# Options (defaults): --workers 1,2,4,8  --submissions 48  --clients 0 (= 2 per worker)  --out
# $OUT or /tmp/ptxbench-eval-throughput  --bin build/bin (or $PTXBENCH_BIN)  --device 0
# --sanitize-timeout 8 --call-timeout 5 (as scripts/service_load.sh; the service's defaults, 120
# and 30 s, make each hang cost minutes)  --phase-limit 0 (seconds; a phase still running then is cut
# and summarised from its verdicts so far)  --start-timeout 300  --check-workers N (serve's check
# workers, which run each task's compile stage on the CPU first; default: serve's own; 0 = every
# stage on the GPU workers, as before the check lane)  --keep-cache  --fake (no GPU:
# `serve --fake-gpus 1`, a plumbing check; the numbers mean nothing)  --quick (= --workers 1,4
# --submissions 6 --phase-limit 60 unless given).
# Duration: on one H200 the GEMM fixture mix ran at ~14-22 evaluations/min with 4 workers
# (results/service_load.md), so the full run (4 worker counts x 2 phases x 48, plus a cold start of
# about half a minute per count) takes about 35-45 minutes: more than one 10-minute GPU call. Split
# it, one call per worker count, each phase capped (`--workers 1 --submissions 24 --phase-limit 230`,
# `--workers 2 --submissions 32 --phase-limit 230`, `--workers 4 --phase-limit 230`, `--workers 8
# --phase-limit 230`: under 9 minutes each), and merge the folders:
# scripts/bench/eval_throughput_summary.py OUT1 OUT2 ... --json all.json --md all.md.
# --quick: about 4 minutes; at most 4 x 60 s of phases plus two cold starts.
# A phase that cannot run is an error (exit 1); verdicts other than the expected ones are reported,
# not fatal. Without a GPU (and without --fake): exit 77.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
WORKERS='' SUBMISSIONS='' CLIENTS=0 OUT_DIR=${OUT:-/tmp/ptxbench-eval-throughput} BIN=${PTXBENCH_BIN:-build/bin}
DEVICE=0 SANITIZE_TIMEOUT=8 CALL_TIMEOUT=5 PHASE_LIMIT='' START_TIMEOUT=300 KEEP_CACHE=0 FAKE=0 QUICK=0 CHECK_WORKERS=
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || { echo "eval_throughput: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) need_value "$@"; WORKERS=$2; shift ;;
    --submissions) need_value "$@"; SUBMISSIONS=$2; shift ;;
    --clients) need_value "$@"; CLIENTS=$2; shift ;;
    --out) need_value "$@"; OUT_DIR=$2; shift ;;
    --bin) need_value "$@"; BIN=$2; shift ;;
    --device) need_value "$@"; DEVICE=$2; shift ;;
    --sanitize-timeout) need_value "$@"; SANITIZE_TIMEOUT=$2; shift ;;
    --call-timeout) need_value "$@"; CALL_TIMEOUT=$2; shift ;;
    --phase-limit) need_value "$@"; PHASE_LIMIT=$2; shift ;;
    --start-timeout) need_value "$@"; START_TIMEOUT=$2; shift ;;
    --check-workers) need_value "$@"; CHECK_WORKERS=$2; shift ;;
    --keep-cache) KEEP_CACHE=1 ;;
    --fake) FAKE=1 ;;
    --quick) QUICK=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "eval_throughput: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
  shift
done
if [ $QUICK = 1 ]; then
  WORKERS=${WORKERS:-1,4} SUBMISSIONS=${SUBMISSIONS:-6} PHASE_LIMIT=${PHASE_LIMIT:-60}
fi
WORKERS=${WORKERS:-1,2,4,8} SUBMISSIONS=${SUBMISSIONS:-48} PHASE_LIMIT=${PHASE_LIMIT:-0}
for v in "$SUBMISSIONS" "$CLIENTS" "$DEVICE" "$PHASE_LIMIT" "$START_TIMEOUT" ${CHECK_WORKERS:-0} ${WORKERS//,/ }; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "eval_throughput: '$v' is not a whole number" >&2; exit 2; }
done
[ "$SUBMISSIONS" -gt 0 ] || { echo "eval_throughput: --submissions must be positive" >&2; exit 2; }
[ -d "$BIN" ] || BIN=$(dirname "$BIN")  # the executable itself is accepted too
[ -x "$BIN/ptxbench" ] || { echo "eval_throughput: no ptxbench at $BIN/ptxbench (build with scripts/setup.sh, or --bin DIR)" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)

gpu_name=fake
if [ $FAKE = 0 ]; then
  if ! command -v nvidia-smi > /dev/null; then
    echo "eval_throughput: no GPU here (no nvidia-smi): this benchmark needs one (--fake checks the plumbing without)"
    exit 77
  fi
  n_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  if [ "${n_gpus:-0}" -le "$DEVICE" ]; then
    echo "eval_throughput: no GPU $DEVICE here (nvidia-smi lists ${n_gpus:-0}): this benchmark needs one (--fake checks the plumbing without)"
    exit 77
  fi
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$DEVICE" | head -1)
  # The service's GPU 0 is this one; CUDA and nvidia-smi then number the GPUs alike.
  export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=$DEVICE
fi
export PTXBENCH_HOME=$root
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

mkdir -p "$OUT_DIR" || exit 2
OUT_DIR=$(cd "$OUT_DIR" && pwd)
log() { echo "== $(date -u +%T) $*" | tee -a "$OUT_DIR/bench.log"; }
# The caches are not under $OUT_DIR: they are large (a library per source), and must not be under
# /tmp, which the runners' sandbox replaces with a private one (src/evaluator/evaluator.cpp).
work=$root/.cache/eval_throughput/run-$(date -u +%Y%m%dT%H%M%S)-$$
mkdir -p "$work" || exit 2
serve_pid='' load_pid='' sampler_pid='' serve_cache='' url='' start_s='' phase_cut=false failed=0
cleanup() {
  for p in $load_pid $sampler_pid; do kill "$p" 2>/dev/null; done
  [ -n "$serve_pid" ] && stop_service
  [ $KEEP_CACHE = 1 ] || { rm -rf "$work"; rmdir "$(dirname "$work")" 2>/dev/null; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

py() { python3 "$root/scripts/bench/eval_throughput.py" "$@"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

log "eval_throughput: workers $WORKERS, $SUBMISSIONS submissions per phase, GPU $DEVICE ($gpu_name), out $OUT_DIR"
rm -rf "$OUT_DIR/mix"
fake_flag=(); [ $FAKE = 1 ] && fake_flag=(--fake)
py mix --bin "$BIN" --submissions "$SUBMISSIONS" --out "$OUT_DIR/mix" "${fake_flag[@]}" | tee -a "$OUT_DIR/bench.log"
[ "${PIPESTATUS[0]}" = 0 ] || { log "could not write the mix"; exit 1; }

# start_service WORKERS CACHE DIR: a fresh service (queue DIR/queue.db, log DIR/serve.log) on CACHE;
# sets serve_pid, url and start_s.
start_service() {
  local w=$1 cache=$2 dir=$3 gpus=(--gpus 1)
  [ $FAKE = 1 ] && gpus=(--fake-gpus 1)
  [ -n "$CHECK_WORKERS" ] && gpus+=(--check-workers "$CHECK_WORKERS")
  mkdir -p "$dir" "$cache"
  port=$(free_port)
  url=http://127.0.0.1:$port
  serve_cache=$cache
  PTXBENCH_CACHE_DIR=$cache "$BIN/ptxbench" serve --listen "127.0.0.1:$port" --db "$dir/queue.db" "${gpus[@]}" \
    --workers-per-gpu "$w" --sanitize-timeout "$SANITIZE_TIMEOUT" --call-timeout "$CALL_TIMEOUT" \
    >> "$dir/serve.out" 2>> "$dir/serve.log" &
  serve_pid=$!
  start_s=$(py ready --service "$url" --log "$dir/serve.log" --workers "$w" --pid "$serve_pid" --timeout "$START_TIMEOUT" 2>> "$OUT_DIR/bench.log")
}

# Stops the service (SIGTERM, then SIGKILL after 30 s) and kills, by pid, any process still
# running from its cache folder (a tool's helper or a runner that outlived it).
stop_service() {
  kill -TERM "$serve_pid" 2>/dev/null
  for _ in $(seq 1 60); do kill -0 "$serve_pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$serve_pid" 2>/dev/null
  wait "$serve_pid" 2>/dev/null
  serve_pid=
  local left
  [ -n "$serve_cache" ] || return 0
  left=$(py leftovers --under "$serve_cache")
  if [ -n "$left" ]; then
    log "left running by the service: $(ps -o pid=,etimes=,comm= -p "${left// /,}" | tr -s ' ' | tr '\n' ';'); killed"
    kill -9 $left 2>/dev/null
  fi
}

# write_phase DIR KEY=VALUE...: phase.json (values are JSON already: numbers, true/false, "strings").
write_phase() {
  local dir=$1; shift
  python3 - "$dir/phase.json" "$@" <<'PY'
import json, sys
doc = {}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    doc[k] = json.loads(v) if v else None
open(sys.argv[1], "w").write(json.dumps(doc, indent=1) + "\n")
PY
}

# run_phase WORKERS CACHE_LABEL: the mix through the running service; its files in OUT/phases/w<N>-<label>.
run_phase() {
  local w=$1 label=$2 name="w$1-$2${CHECK_WORKERS:+-c$CHECK_WORKERS}" dir clients=$CLIENTS cut=false rc started ended
  dir=$OUT_DIR/phases/$name
  rm -rf "$dir"; mkdir -p "$dir"
  [ "$clients" -gt 0 ] || clients=$((2 * w))
  log "$name: $SUBMISSIONS submissions from $clients clients, $w worker(s)"
  if [ $FAKE = 0 ]; then
    nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -i "$DEVICE" -lms 200 \
      > "$dir/gpu_util.csv" 2>/dev/null &
    sampler_pid=$!
  fi
  started=$(date +%s)
  "$BIN/ptxbench" suite load "$OUT_DIR/mix/mix_suite.json" --service "$url" --count "$SUBMISSIONS" --clients "$clients" \
    --key-prefix "et-$name-$$-$(date +%s)" --timeout 1800 --outage 60 --out "$dir/load.jsonl" > "$dir/load.log" 2>&1 &
  load_pid=$!
  while kill -0 "$load_pid" 2>/dev/null; do
    if [ "$PHASE_LIMIT" -gt 0 ] && [ $(( $(date +%s) - started )) -ge "$PHASE_LIMIT" ]; then
      cut=true
      kill "$load_pid" 2>/dev/null
      log "$name: cut after $PHASE_LIMIT s"
      break
    fi
    sleep 1
  done
  wait "$load_pid"; rc=$?
  ended=$(date +%s.%N)
  load_pid=
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null && wait "$sampler_pid" 2>/dev/null
  sampler_pid=
  local records=$dir/load.jsonl
  [ -f "$records" ] || records=$dir/load.jsonl.partial
  [ -f "$records" ] && py fetch --service "$url" --load "$records" --out "$dir/verdicts.jsonl" >> "$OUT_DIR/bench.log"
  tail -n 3 "$dir/load.log" | tee -a "$OUT_DIR/bench.log"
  write_phase "$dir" name="\"$name\"" workers="$w" cache="\"$label\"" submissions="$SUBMISSIONS" clients="$clients" \
    device="$DEVICE" gpu="\"$gpu_name\"" fake="$([ $FAKE = 1 ] && echo true || echo false)" \
    start_s="${3:-}" cut="$cut" ended_at="$ended" service_restarted="${4:-false}" load_rc="$rc" phase_limit_s="$PHASE_LIMIT" \
    sanitize_timeout="$SANITIZE_TIMEOUT" call_timeout="$CALL_TIMEOUT" check_workers="${CHECK_WORKERS:-\"default\"}"
  phase_cut=$cut
  # 1: some verdict not as expected (reported, not fatal); 2 or 3: the load could not run.
  if [ $cut = false ] && [ "$rc" -gt 1 ]; then log "$name: suite load failed (exit $rc; see $dir/load.log)"; failed=1; fi
}

failed=0
for w in ${WORKERS//,/ }; do
  [ "$w" -ge 1 ] && [ "$w" -le 16 ] || { log "workers per GPU must be 1 to 16, not $w"; failed=1; continue; }
  cache=$work/w$w
  svc=$OUT_DIR/services/w$w
  rm -rf "$cache" "$svc" "$OUT_DIR/phases/w$w-cold" "$OUT_DIR/phases/w$w-warm"
  log "w$w: starting a fresh service ($w worker(s) per GPU) on a fresh cache"
  start_service "$w" "$cache" "$svc"
  if [ -z "$start_s" ]; then
    why="service not ready within $START_TIMEOUT s (see services/w$w/serve.log)"
    log "w$w: $why"
    mkdir -p "$OUT_DIR/phases/w$w-cold"
    write_phase "$OUT_DIR/phases/w$w-cold" name="\"w$w-cold\"" workers="$w" cache="\"cold\"" submissions="$SUBMISSIONS" \
      gpu="\"$gpu_name\"" error="\"$why\""
    stop_service; failed=1; continue
  fi
  log "w$w: ready after $start_s s"
  run_phase "$w" cold "$start_s"
  restarted=false
  if [ "$phase_cut" = true ]; then
    # The cut phase's tasks would still hold the workers: a fresh queue on the same cache.
    stop_service
    start_service "$w" "$cache" "$svc/after-cut"
    restarted=true
    [ -n "$start_s" ] || { log "w$w: the service did not start again"; stop_service; failed=1; continue; }
  fi
  run_phase "$w" warm "" "$restarted"
  stop_service
  [ $KEEP_CACHE = 1 ] || rm -rf "$cache"
done

python3 "$root/scripts/bench/eval_throughput_summary.py" "$OUT_DIR" --json "$OUT_DIR/eval_throughput.json" \
  --md "$OUT_DIR/eval_throughput.md" || failed=1
exit $failed

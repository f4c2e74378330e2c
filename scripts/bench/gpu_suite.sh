#!/usr/bin/env bash
# The GPU suite: on one sm_90a host, in one run, the GPU tests and the benchmark numbers recorded in
# results/ (results/README.md lists which file holds which). Each section measures one thing:
#   tests      reference, baseline, pack-template and expert GPU tests (results/hopper_pack.md)
#   bench      the expert GEMM (one full evaluation, 3 timing-only), the A/A (cuBLASLt against itself),
#              the wgmma fixture 5 times, one full evaluation's wall time (results/timing_method.md)
#   fixtures   every GEMM fixture and adversarial case against its expected verdict (GPU tests)
#   before     the bench numbers with an earlier build's binaries (BEFORE_BIN), for a before/after on
#              one machine (results/measurement_integrity.md)
#   probe      host facts, the sandbox tests on this host, ncu's per-instruction page, CUDA under
#              RLIMIT_DATA (results/sandbox.md)
#   integrity  the runner sandbox GPU tests, the fixture and adversarial suites (results/measurement_integrity.md)
#   sandbox    a full evaluation with the filesystem view required (results/sandbox.md)
#   sass       CUPTI SASS counts against ncu, then the fixture suite (results/runtime_sass_tools.md)
#   attention  attention references, cuDNN baselines against PyTorch's cuDNN SDPA, the attention
#              fixtures (results/attention_baselines.md)
#   agent      the expert policy over GEMM through a local service, its run store (results/agent_runs.md)
#   mainjob    the main job's agent run (MAIN_CONFIG, default configs/expert_quick.json; results/main_job.md)
#   guards     the service's GPU guards (GUARDS_FILTER): alone-confirmed time-outs, NVML idle, no runner
#              left by a killed service (results/service_load.md)
#   load       scripts/service_load.sh (COUNT, CLIENTS, RESTART_AT, WORKERS_PER_GPU, GPUS, LOAD_LIMIT_S)
#   scaling    the same load on 1 GPU, on 2, then with GPU 1's workers killed (SCALE_COUNT1, SCALE_COUNT2,
#              KILL_COUNT, PHASE_LIMIT_S; a host with 2+ GPUs)
# On a plain checkout (scripts/setup.sh built build/bin):
#   scripts/bench/gpu_suite.sh                                   # SECTIONS="tests bench fixtures"
#   OUT=/tmp/o SECTIONS="guards load" GPUS=2 COUNT=200 scripts/bench/gpu_suite.sh
# Logs and archives go to $OUT (default /tmp/ptxbench-out); bench.log has every section's summary.
#   PTXBENCH_BIN     folder with ptxbench, ptxbench-runner, ptxbench_gpu_tests (default build/bin)
#   SECTIONS         which sections, in order (default "tests bench fixtures")
#   BEFORE_BIN       for `before`: the folder of the earlier build's binaries (a COMMIT file beside it names it)
#   SASS_CUBINS      for `bench`: a folder of .cubin files to disassemble with this host's cuobjdump
#   LINK_BUILD_TREE  1: the GPU tests read their fixtures from the source tree they were built in (a
#                    path compiled into them); when that path is missing here (binaries built in another
#                    checkout), make it a symlink to this checkout
# The CLI reads definitions, workloads and knowledge from $PTXBENCH_HOME, set to this checkout.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-/tmp/ptxbench-out}
mkdir -p "$OUT"
BIN=${PTXBENCH_BIN:-build/bin}
export PTXBENCH_HOME=$root
export PTXBENCH_CACHE_DIR=${PTXBENCH_CACHE_DIR:-$root/.cache/ptxbench}
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
def=gemm_n7168_k5120
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/bench.log"; }
summarize() { python3 scripts/bench/summarize_verdicts.py "$@" | tee -a "$OUT/bench.log"; }

built_in=$("$BIN/ptxbench" env --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["build_source_dir"])' 2>/dev/null)
if [ -n "$built_in" ] && [ "$built_in" != "$root" ] && [ ! -e "$built_in" ]; then
  if [ "${LINK_BUILD_TREE:-0}" = 1 ]; then
    mkdir -p "$(dirname "$built_in")" && ln -s "$root" "$built_in" && log "linked $built_in (the binaries' source tree) to $root"
  else
    log "warning: the GPU tests were built in $built_in, which is missing here: their fixtures will not be found (LINK_BUILD_TREE=1 links it to this checkout)"
  fi
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active \
  --format=csv > "$OUT/gpu.txt" 2>&1
git rev-parse HEAD >> "$OUT/gpu.txt" 2>/dev/null
[ -f "$BIN/../COMMIT" ] && echo "binaries built from $(cat "$BIN/../COMMIT")" >> "$OUT/gpu.txt"


# After each part: nothing of ours may still run. What is left (a bug, or a part cut by its
# limit) is named in bench.log and killed, so it cannot share the next part's GPU and timings
# (a leaked hang once held GPU 0 at 100% through every later phase: results/service_load.md).
reap_leftovers() {
  local pids
  pids=$(pgrep -f 'ptxbench-runner|ptxbench (serve|worker)|TreeLauncher' | paste -sd, -)
  if [ -n "$pids" ]; then
    log "left running after $1: $(ps -o pid=,etimes=,comm= -p "$pids" | tr -s ' ' | tr '\n' ';')"
    kill -9 ${pids//,/ } 2>/dev/null
    sleep 2
  fi
  log "GPU utilization after $1 (%): $(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits | tr '\n' ' ')"
}

section_tests() {
log "reference, baseline, pack template and expert tests"
timeout -s KILL 180 "$BIN/ptxbench_gpu_tests" --gtest_filter='RandomFill*:GemmReference*:Baseline*:Sm90Templates*:FixtureVerdicts.Expert*' 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[fixture\]|OK \]|FAILED|Failure|Expected|Which is|actual|PASSED"
}

section_bench() {
log "expert GEMM: one full evaluation, then 3 timing-only evaluations"
timeout -s KILL 200 "$BIN/ptxbench" eval $def knowledge/hopper/experts/gemm_n7168_k5120.cu --json > "$OUT/expert.jsonl" 2>>"$OUT/bench.log"
timeout -s KILL 200 "$BIN/ptxbench" eval $def knowledge/hopper/experts/gemm_n7168_k5120.cu --repeat 3 --no-sanitize --no-profile --json >> "$OUT/expert.jsonl" 2>>"$OUT/bench.log"

log "A/A: cuBLASLt evaluated against itself (through the runner)"
timeout -s KILL 120 "$BIN/ptxbench" eval $def --builtin cublaslt --repeat 3 --no-sanitize --no-profile --seed 1 --json > "$OUT/bench.jsonl" 2>>"$OUT/bench.log"
log "wgmma+TMA fixture evaluated 5 times (timing path only)"
timeout -s KILL 150 "$BIN/ptxbench" eval $def tests/fixtures/gemm/wgmma_tma_gemm.cu --repeat 5 --no-sanitize --no-profile --json >> "$OUT/bench.jsonl" 2>>"$OUT/bench.log"
log "one full evaluation, warm compile cache"
start=$(date +%s%N)
timeout -s KILL 120 "$BIN/ptxbench" eval $def tests/fixtures/gemm/wgmma_tma_gemm.cu --json >> "$OUT/bench.jsonl" 2>>"$OUT/bench.log"
end=$(date +%s%N)
log "full eval wall seconds: $(( (end - start) / 1000000 )) ms"
cat "$OUT/expert.jsonl" >> "$OUT/bench.jsonl"
summarize "$OUT/bench.jsonl"
if [ -n "${SASS_CUBINS:-}" ]; then
  for c in "$SASS_CUBINS"/*.cubin; do [ -f "$c" ] && cuobjdump -sass "$c" > "$OUT/$(basename "$c" .cubin).sass.txt" 2>&1; done
fi
cubin=$(ls -d "$PTXBENCH_CACHE_DIR"/*/*/candidate.cubin 2>/dev/null | head -50 | while read c; do grep -l wgmma_tma "$(dirname "$c")/candidate.cu" >/dev/null 2>&1 && echo "$c"; done | head -1)
[ -n "$cubin" ] && cuobjdump -sass "$cubin" > "$OUT/wgmma_tma_sass.txt" 2>&1

}

section_fixtures() {
log "fixture verdicts (GPU test)"
mkdir -p /tmp/verdicts
PTXBENCH_TEST_OUT=/tmp/verdicts timeout -s KILL 420 "$BIN/ptxbench_gpu_tests" --gtest_filter='FixtureVerdicts*' 2>&1 | tee -a "$OUT/gpu_tests.log" | grep -E "^\[fixture\]|OK|FAILED|PASSED|Failure|Expected|Which is|actual"
tar czf "$OUT/verdicts.tgz" -C /tmp verdicts
}

# Runtime SASS counts through CUPTI in the runner (the default) against ncu, on the same inputs;
# then the whole GEMM fixture suite with the default tool.
section_sass() {
  log "CUPTI SASS metrics offered here"
  "$BIN/ptxbench-runner" sass-metrics > "$OUT/sass_metrics.txt" 2>&1; grep -E "^smsp__sass_(inst_executed|thread_inst_executed)" "$OUT/sass_metrics.txt"
  log "CUPTI counts vs ncu counts, then the GEMM fixture suite"
  timeout -s KILL ${SASS_LIMIT_S:-240} "$BIN/ptxbench_gpu_tests" --gtest_filter='RuntimeSassTools.*:FixtureVerdicts.EveryFixture*' 2>&1 \
    | tee "$OUT/sass_tests.log" | grep -E "^\[runtime_sass\]|^\[fixture\]|OK \]|FAILED|Failure|Expected|Which is|actual|PASSED"
}

# The runner's read-only filesystem view, required (not best effort): compute-sanitizer and ncu
# must work inside it.
section_sandbox() {
  log "full evaluation with PTXBENCH_SANDBOX_FS=required"
  PTXBENCH_SANDBOX_FS=required timeout -s KILL 120 "$BIN/ptxbench" eval $def tests/fixtures/gemm/wgmma_tma_gemm.cu --json \
    > "$OUT/sandbox.jsonl" 2>>"$OUT/bench.log"
  python3 -c "import json,sys; v=json.loads(open(sys.argv[1]).readline()); print('sandbox eval:', v['status'], v.get('speedup'), v['message'][:200])" \
    "$OUT/sandbox.jsonl" 2>&1 | tee -a "$OUT/bench.log"
}

# Attention (issue 3): trusted references, the cuDNN graph-API baselines against PyTorch's cuDNN
# SDPA on the same GPU, and the attention fixtures' verdicts. cuDNN 9.19 from PyTorch's wheel.
section_attention() {
  local sp
  sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))' 2>/dev/null)
  [ -n "$sp" ] && export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:$LD_LIBRARY_PATH
  log "attention: cuDNN from ${sp:-the system}: $(ldd "$BIN/ptxbench_gpu_tests" | grep -o 'libcudnn.so.9 => [^ ]*')"
  timeout -s KILL 240 "$BIN/ptxbench_gpu_tests" --gtest_filter='MhaReference*:MhaOperators*:MhaCudnn*' 2>&1 \
    | tee "$OUT/attention_tests.log" | grep -E '"impl"|engine|OK \]|FAILED|Failure|Expected|Which is|actual|PASSED|SKIPPED' | head -60
  log "PyTorch cuDNN SDPA on the same shapes"
  timeout -s KILL 120 python3 scripts/bench/torch_sdpa.py > "$OUT/torch_sdpa.jsonl" 2>&1; tail -12 "$OUT/torch_sdpa.jsonl"
  log "attention fixture verdicts (S=1024)"
  mkdir -p /tmp/verdicts
  PTXBENCH_TEST_OUT=/tmp/verdicts timeout -s KILL 300 "$BIN/ptxbench_gpu_tests" --gtest_filter='FixtureVerdicts.Attention*' 2>&1 \
    | tee -a "$OUT/attention_tests.log" | grep -E "^\[fixture\]|OK \]|FAILED|Failure|Expected|Which is|actual"
  tar czf "$OUT/verdicts.tgz" -C /tmp verdicts
}

# The agent (issue 5) with the expert policy over GEMM through a local service; the run store comes
# back for the report (issue 7).
section_agent() {
  log "agent: expert policy, GEMM, through a local service"
  cat > /tmp/agent.json <<'JSON'
{"name": "H200 expert run", "policy": "expert", "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["params", "contract"],
 "trajectories_per_tag": 1, "num_turns": 2, "concurrency": 2, "service": "local"}
JSON
  local start
  start=$(date +%s)
  timeout -s KILL 240 "$BIN/ptxbench" run --config /tmp/agent.json --store /tmp/agent/runs.db --runs-dir /tmp/agent/runs \
    > "$OUT/agent.log" 2>&1
  log "agent run: exit $?, $(( $(date +%s) - start )) s wall"
  tail -8 "$OUT/agent.log"
  cp /tmp/agent/runs.db "$OUT/runs.db"
}

# The main job's agent run (configs/expert_quick.json: every definition, one turn), then its report.
section_mainjob() {
  local sp
  sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))' 2>/dev/null)
  [ -n "$sp" ] && export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:$LD_LIBRARY_PATH
  log "main job: expert policy over every definition (${MAIN_CONFIG:-configs/expert_quick.json})"
  local start
  start=$(date +%s)
  timeout -s KILL ${MAIN_LIMIT_S:-300} "$BIN/ptxbench" run --config "${MAIN_CONFIG:-configs/expert_quick.json}" \
    --store /tmp/main/runs.db --runs-dir /tmp/main/runs --local-service-arg=--workers-per-gpu=4 > "$OUT/main.log" 2>&1
  log "main job run: exit $?, $(( $(date +%s) - start )) s wall"
  tail -12 "$OUT/main.log"
  cp /tmp/main/runs.db "$OUT/main_runs.db"
}

# The service's guards: a time-out on a shared GPU confirmed alone, NVML's idle
# reading, no runner left on the GPU by a killed service, and runners under ncu (which now watch
# for being orphaned) still profiled; and the GEMM and attention references, whose register tile
# is now one shared helper (reference/register_tile.cuh). About a minute and a half.
section_guards() {
  log "service guards (GPU tests)"
  timeout -s KILL ${GUARDS_LIMIT_S:-240} "$BIN/ptxbench_gpu_tests" \
    --gtest_filter="${GUARDS_FILTER:-NvmlIdle.*:ServiceOnGpu.*:FixtureVerdicts.ATimeout*:RuntimeSassTools.NcuRunsOnly*:GemmReferenceTest.*:MhaReferenceTest.*}" 2>&1 | tee "$OUT/guards.log" \
    | grep -E "OK \]|FAILED|Failure|Expected|Which is|actual|PASSED|outlived|still|info \]"
}

section_load() {
  log "service load (scripts/service_load.sh)"
  mkdir -p "$OUT/load"
  OUT="$OUT/load" PTXBENCH_BIN="$BIN" timeout -s KILL ${LOAD_LIMIT_S:-420} bash scripts/service_load.sh
  tail -25 "$OUT/load/load.log" | tee -a "$OUT/bench.log"
  tar czf "$OUT/load.tgz" -C "$OUT" load && rm -rf "$OUT/load"  # one file back, whatever the count
}

# Multi-GPU scaling (issue 8), on a host with 2+ GPUs: the same fixture load on 1 GPU and on 2,
# then GPU 1's workers killed mid-load. Each phase's files go to a folder; all come back as one
# archive. SCALE_COUNT1 / SCALE_COUNT2 / KILL_COUNT submissions per phase, sized for one 10-minute
# call at ~16-20 evaluations/min per GPU (hangs are confirmed with the GPU alone, which costs time).
section_scaling() {
  local phase n gpus count clients kill
  for phase in "1 1 ${SCALE_COUNT1:-40} 8 0" "2 2 ${SCALE_COUNT2:-80} 16 0" "3 2 ${KILL_COUNT:-40} 16 15"; do
    read -r n gpus count clients kill <<< "$phase"
    log "scaling phase $n: GPUS=$gpus COUNT=$count CLIENTS=$clients KILL_WORKER_AT=$kill"
    mkdir -p "$OUT/scaling/phase$n"
    OUT="$OUT/scaling/phase$n" PTXBENCH_BIN="$BIN" GPUS=$gpus COUNT=$count CLIENTS=$clients RESTART_AT=0 \
      KILL_WORKER_AT=$kill PORT=$((18750 + n)) timeout -s KILL ${PHASE_LIMIT_S:-180} bash scripts/service_load.sh > /dev/null 2>&1
    tail -2 "$OUT/scaling/phase$n/load.log" | tee -a "$OUT/bench.log"
    reap_leftovers "scaling phase $n"
  done
  python3 - "$OUT/scaling" <<'PY' | tee -a "$OUT/bench.log"
import json, os, sys
rates = {}
for n in (1, 2, 3):
    f = os.path.join(sys.argv[1], f"phase{n}", "load.jsonl.summary.json")
    partial = os.path.join(sys.argv[1], f"phase{n}", "load.jsonl.partial")
    if not os.path.exists(f):
        # Cut by the phase's limit: the steady rate from the verdicts that came back.
        done = sorted(json.loads(l)["done_at"] for l in open(partial)) if os.path.exists(partial) else []
        if len(done) >= 10:
            i0, i1 = len(done) // 10, len(done) - 1 - len(done) // 10
            rates[n] = 60.0 * (i1 - i0) / (done[i1] - done[i0])
            print(f"phase {n}: cut by its limit after {len(done)} verdicts, {rates[n]:.1f}/min steady")
        else:
            print(f"phase {n}: no summary")
        continue
    s = json.load(open(f))
    rates[n] = s["steady_evaluations_per_minute"]
    print(f"phase {n}: {s['as_expected']}/{s['submissions']} as expected, lost {s['lost']}, "
          f"{s['evaluations_per_minute']:.1f}/min ({s['steady_evaluations_per_minute']:.1f} steady), "
          f"p50 {s['latency']['p50_s']:.1f} s p95 {s['latency']['p95_s']:.1f} s, re-runs by worker {s['reruns_finished_by_worker']}, "
          f"unstable speedups {s.get('unstable_speedups')}")
if 1 in rates and 2 in rates and rates[1] > 0:
    print(f"scaling efficiency (steady): {rates[2] / (2 * rates[1]):.3f}")
PY
  tar czf "$OUT/scaling.tgz" -C "$OUT" scaling && rm -rf "$OUT/scaling"
}

# Host facts the sandbox depends on, the sandbox tests on this host, the runner's sandbox on the
# GPU, a sample of ncu's per-instruction page, and CUDA under RLIMIT_DATA.
section_probe() {
log "host facts"
{ uname -a; id; cat /proc/self/cgroup; ls /sys/fs/cgroup | head -40; cat /sys/fs/cgroup/cgroup.controllers
  cat /sys/fs/cgroup/cgroup.subtree_control; mount | grep -E "cgroup|proc |sysfs"; ls -l /dev/nvidia* /dev/nvidia-caps 2>&1
  echo "ptrace_scope $(cat /proc/sys/kernel/yama/ptrace_scope 2>&1)"; echo "userns $(cat /proc/sys/user/max_user_namespaces)"
  for t in ncu compute-sanitizer cuobjdump; do echo "$t $(command -v $t) -> $(readlink -f "$(command -v $t)")"; done
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; ldconfig -p | grep -E "libcuda.so|libcudnn.so.9|libcupti|libnvidia-ml"
  grep -i profil /proc/driver/nvidia/params; free -g; } > "$OUT/host_facts.txt" 2>&1
log "sandbox, seccomp and control-channel CPU tests on this host"
timeout -s KILL 120 "$BIN/ptxbench_cpu_tests" --gtest_filter='Sandbox*:Seccomp*:ControlChannel*' 2>&1 | tee "$OUT/sandbox_cpu.log" | grep -E "^\[ +(OK|FAILED)|Failure|Expected|Which|actual"
log "runner sandbox, reference rows (GPU tests)"
timeout -s KILL 300 "$BIN/ptxbench_gpu_tests" --gtest_filter='RunnerSandbox.*:ReferenceRows.*:FreshInputs.*' 2>&1 | tee "$OUT/runner_sandbox.log" | grep -E "^\[ +(OK|FAILED)|^\[(sandbox|host|launch|memcheck|ncu)|Failure|Expected|Which|actual"
log "ncu per-instruction page of the expert GEMM (for tensor-core coverage)"
key=$("$BIN/ptxbench" compile knowledge/hopper/experts/gemm_n7168_k5120.cu --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')
lib="$PTXBENCH_CACHE_DIR/compile/${key:0:2}/$key/candidate.so"
python3 - > /tmp/gemm_spec.json <<'PY'
import json
t=lambda n,s,o: {"name":n,"dtype":"bfloat16","shape":s,"strides":[s[1],1],"is_output":o}
print(json.dumps({"tensors":[t("A",[8192,5120],False),t("B",[7168,5120],False),t("C",[8192,7168],True)]}))
PY
timeout -s KILL 120 ncu --section SourceCounters --page source --print-source sass --csv --clock-control none \
  "$BIN/ptxbench-runner" --no-seccomp once --no-orphan-watch --library "$lib" --spec /tmp/gemm_spec.json > "$OUT/ncu_source.csv" 2> "$OUT/ncu_source.err"
log "ncu source page: $(wc -l < "$OUT/ncu_source.csv") lines, $(grep -c GMMA "$OUT/ncu_source.csv") GMMA lines"
log "CUDA under RLIMIT_DATA = 16 GiB"
( ulimit -d 16777216; timeout -s KILL 60 "$BIN/ptxbench-runner" once --no-orphan-watch --library "$lib" --spec /tmp/gemm_spec.json ) \
  > "$OUT/rlimit_data.log" 2>&1; log "runner once under RLIMIT_DATA: exit $?"
}

# The sandboxed runner, every fixture (their verdicts as before) and the adversarial suite (issues
# 15 and 16), with the verdicts kept as an archive.
section_integrity() {
log "runner sandbox (GPU tests)"
timeout -s KILL 200 "$BIN/ptxbench_gpu_tests" --gtest_filter='RunnerSandbox.*' 2>&1 | tee "$OUT/runner_sandbox.log" | grep -E "^\[ +(OK|FAILED)|^\[(sandbox|host|launch|memcheck|ncu)|Failure|Expected|Which|actual"
log "fixture suite and adversarial suite (GPU tests)"
mkdir -p /tmp/verdicts
PTXBENCH_TEST_OUT=/tmp/verdicts timeout -s KILL 420 "$BIN/ptxbench_gpu_tests" --gtest_filter='FixtureVerdicts.EveryFixture*:FixtureVerdicts.Adversarial*' 2>&1 \
  | tee "$OUT/fixtures.log" | grep -E "^\[(fixture|adversarial)\]|^\[ +(OK|FAILED)|Failure|Expected|Which|actual"
tar czf "$OUT/verdicts.tgz" -C /tmp verdicts
}

# The same measurements with an earlier build's binaries (BEFORE_BIN): the "before" of a change,
# taken on the same machine in the same run as the "after" (the bench section).
section_before() {
local OLD=${BEFORE_BIN:-}
[ -x "$OLD/ptxbench" ] || { log "before: set BEFORE_BIN to the folder of the earlier build's binaries"; return 1; }
log "before: A/A, wgmma fixture x3 (timing), one full evaluation, expert x3 (timing) with $(cat "$OLD/../COMMIT" 2>/dev/null || echo "$OLD")"
timeout -s KILL 120 "$OLD/ptxbench" eval $def --builtin cublaslt --repeat 3 --no-sanitize --no-profile --seed 1 --json > "$OUT/before.jsonl" 2>>"$OUT/bench.log"
timeout -s KILL 150 "$OLD/ptxbench" eval $def tests/fixtures/gemm/wgmma_tma_gemm.cu --repeat 3 --no-sanitize --no-profile --json >> "$OUT/before.jsonl" 2>>"$OUT/bench.log"
start=$(date +%s%N)
timeout -s KILL 120 "$OLD/ptxbench" eval $def tests/fixtures/gemm/wgmma_tma_gemm.cu --json >> "$OUT/before.jsonl" 2>>"$OUT/bench.log"
log "before: full eval wall $(( ($(date +%s%N) - start) / 1000000 )) ms"
timeout -s KILL 150 "$OLD/ptxbench" eval $def knowledge/hopper/experts/gemm_n7168_k5120.cu --repeat 3 --no-sanitize --no-profile --json >> "$OUT/before.jsonl" 2>>"$OUT/bench.log"
summarize "$OUT/before.jsonl"
}

for section in ${SECTIONS:-tests bench fixtures}; do
  "section_$section"
  reap_leftovers "section $section"
done
log "done"

#!/usr/bin/env bash
# The main job (a run config through the agent and a local evaluation service) under two builds on
# one GPU: whether a change left every turn's verdict and speedup where it was. Runs the config with
# the earlier build, then with this one, each into its own run store, then prints one row per
# (definition, prompt tag, index, turn): status before/after, speedup before/after and their ratio.
#   scripts/bench/main_job_before_after.sh BEFORE_BIN [CONFIG]
#   BEFORE_BIN      folder with the earlier build's ptxbench and ptxbench-runner
#   CONFIG          run config (default configs/expert_quick.json)
#   PTXBENCH_BIN    this build's folder (default build/bin)
#   OUT             where the stores, run folders and logs go (default /tmp/ptxbench-main-job)
# The CLI reads definitions, workloads and knowledge from $PTXBENCH_HOME, set to this checkout.
#   BEFORE_HOME     the earlier build's data root instead (default this checkout): for a build
#                   that cannot read data added since (a definition of an op it lacks), a copy of
#                   this checkout's data without it, so both builds judge the same kernels.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
before_bin=${1:?usage: main_job_before_after.sh BEFORE_BIN [CONFIG]}
config=${2:-configs/expert_quick.json}
after_bin=${PTXBENCH_BIN:-build/bin}
OUT=${OUT:-/tmp/ptxbench-main-job}
mkdir -p "$OUT"
export PTXBENCH_HOME=$root
before_home=${BEFORE_HOME:-$root}
export PATH=/usr/local/cuda/bin:$PATH
for side in before after; do
  bin=$before_bin; [ "$side" = after ] && bin=$after_bin
  dir="$OUT/$side"
  mkdir -p "$dir"
  echo "== $(date -u +%H:%M:%S) $side: $bin/ptxbench run --config $config"
  start=$(date +%s)
  # Each build's own cache: a compile cached by one build is never the other's.
  home=$root; [ "$side" = before ] && home=$before_home
  PTXBENCH_HOME=$home PTXBENCH_CACHE_DIR="$OUT/cache-$side" "$bin/ptxbench" run --config "$config" --store "$dir/runs.db" \
    --runs-dir "$dir/runs" >"$dir/run.log" 2>&1
  echo "   exit $? in $(( $(date +%s) - start )) s ($(tail -1 "$dir/run.log"))"
done
python3 - "$OUT/before/runs.db" "$OUT/after/runs.db" <<'PY' | tee "$OUT/compare.txt"
import sqlite3, sys

def turns(path):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        rows = db.execute("SELECT t.definition, t.prompt_tag, t.tag_index, u.turn, u.status, u.speedup "
                          "FROM turns u JOIN trajectories t ON t.id = u.trajectory_id").fetchall()
    except sqlite3.Error as e:
        print(f"{path}: {e}")
        return {}
    return {(d, tag, i, turn): (status, speedup) for d, tag, i, turn, status, speedup in rows}

before, after = turns(sys.argv[1]), turns(sys.argv[2])
print(f"{'turn':58} {'before':22} {'after':22} {'speedup before':>14} {'after':>8} {'ratio':>7}")
differences, worst = 0, 1.0
for key in sorted(set(before) | set(after)):
    b, a = before.get(key, ("-", None)), after.get(key, ("-", None))
    ratio = a[1] / b[1] if a[1] and b[1] else None
    if b[0] != a[0]:
        differences += 1
    if ratio is not None and abs(ratio - 1) > abs(worst - 1):
        worst = ratio
    name = "{}/{}#{} turn {}".format(*key)
    fmt = lambda s: f"{s:.4f}" if s is not None else "-"
    print(f"{name:58} {b[0]:22} {a[0]:22} {fmt(b[1]):>14} {fmt(a[1]):>8} {fmt(ratio):>7}")
print(f"{len(set(before) | set(after))} turns, {differences} status differences; worst speedup ratio {worst:.4f}")
PY

#!/usr/bin/env bash
# Verdicts and speedups of the same suites under two builds on one GPU, case by case: whether a
# change (a refactor, a new measurement rule) left every verdict and every speedup where it was.
# Each suite runs with the earlier build, then with this one, before the next suite starts, so a
# drift of the GPU's clock over the call touches both sides alike. Prints one row per case (status
# before/after, speedup before/after and their ratio) and writes every verdict to $OUT.
#   scripts/bench/suite_before_after.sh BEFORE_BIN [SUITE...]
#   BEFORE_BIN      folder with the earlier build's ptxbench and ptxbench-runner
#   PTXBENCH_BIN    this build's folder (default build/bin)
#   SUITE...        suite files (default: the GEMM fixture and adversarial suites, the attention
#                   fixture suites, the five expert suites)
#   ONLY            optional --only case names for every suite (space-separated)
#   OUT             where verdicts and logs go (default /tmp/ptxbench-out)
# The CLI reads definitions, workloads and knowledge from $PTXBENCH_HOME, set to this checkout.
#   BEFORE_HOME     the earlier build's data root instead (default this checkout): for a build
#                   that cannot read data added since (a definition of an op it lacks), a copy of
#                   this checkout's data without it, so both builds judge the same kernels.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
before_bin=${1:?usage: suite_before_after.sh BEFORE_BIN [SUITE...]}
shift
after_bin=${PTXBENCH_BIN:-build/bin}
OUT=${OUT:-/tmp/ptxbench-out}
mkdir -p "$OUT"
export PTXBENCH_HOME=$root
before_home=${BEFORE_HOME:-$root}
export PATH=/usr/local/cuda/bin:$PATH
suites=("$@")
if ((${#suites[@]} == 0)); then
  suites=(tests/fixtures/gemm/suite.json tests/fixtures/gemm/adversarial_suite.json
          tests/fixtures/attention/mha_fwd_suite.json tests/fixtures/attention/mha_fwd_causal_suite.json
          tests/fixtures/attention/mha_bwd_suite.json tests/fixtures/attention/mha_bwd_causal_suite.json
          knowledge/hopper/experts/*_suite.json)
fi
only=()
[ -n "${ONLY:-}" ] && read -r -a only_cases <<<"$ONLY" && only=(--only "${only_cases[@]}")
for suite in "${suites[@]}"; do
  name=$(basename "$suite" .json)
  for side in before after; do
    bin=$before_bin; [ "$side" = after ] && bin=$after_bin
    dir="$OUT/$side/$(basename "$(dirname "$suite")")_$name"
    mkdir -p "$dir"
    echo "== $(date -u +%H:%M:%S) $side $suite"
    # Each build's own cache: a compile cached by one build is never the other's.
    home=$root; [ "$side" = before ] && home=$before_home
    PTXBENCH_HOME=$home PTXBENCH_CACHE_DIR="$OUT/cache-$side" "$bin/ptxbench" suite run "$suite" "${only[@]}" --out "$dir" \
      >"$dir/table.txt" 2>&1
    echo "   exit $? ($(tail -1 "$dir/table.txt"))"
  done
done
python3 scripts/bench/compare_verdicts.py "$OUT/before" "$OUT/after" | tee "$OUT/compare.txt"

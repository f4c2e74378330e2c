#!/usr/bin/env bash
# The main job (needs an sm_90a GPU host with compute-sanitizer, ncu and cuobjdump): installs and
# builds, then runs the agent with the built-in `expert` policy over every evaluation definition
# (no API key: the bundled expert kernel, or a passing fixture where none exists) through a local
# evaluation service, and writes the report: terminal tables, runs/<run>/report.{html,csv,json}.
#   scripts/main.sh [CONFIG]   (default configs/expert.json)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
config=${1:-configs/expert.json}
store=runs/runs.db
# The attention baselines want cuDNN 9.19+; PyTorch's wheel carries one on many GPU hosts.
if sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))' 2>/dev/null); then
  export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# The newest stored run's id ("" when the store has none yet).
newest_run() {
  [[ -f $store ]] || return 0
  build/bin/ptxbench run --list --json --store "$store" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["id"] if r else "")'
}
before=$(newest_run)
# A failed or unfinished trajectory (exit 4) still leaves a run worth reporting: the report is
# written whatever the run's exit code, and the script exits with that code afterwards.
run_rc=0
build/bin/ptxbench run --config "$config" --store "$store" --runs-dir runs || run_rc=$?
run=$(newest_run)
if [[ -z $run || $run == "$before" ]]; then
  echo "main.sh: the run stored nothing (exit $run_rc); no report" >&2
  exit $(( run_rc ? run_rc : 1 ))
fi
build/bin/ptxbench report "$run" --store "$store" --html "runs/$run/report.html" --csv "runs/$run/report.csv" \
  --json "runs/$run/report.json"
echo "report: runs/$run/report.html"
if (( run_rc != 0 )); then
  echo "main.sh: the run exited $run_rc (some trajectory failed or is unfinished: ptxbench run --resume $run)" >&2
fi
exit "$run_rc"

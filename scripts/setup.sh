#!/usr/bin/env bash
# Installs what ptxbench needs from Debian/Ubuntu packages (only the missing ones) and builds it
# into build/. Needs the CUDA toolkit (13.x) under /usr/local/cuda. Idempotent: rerun at will.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
packages=(cmake ninja-build g++ binutils pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev
          libgtest-dev libsqlite3-dev libcurl4-openssl-dev curl)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
export PATH=/usr/local/cuda/bin:$PATH
if ! command -v nvcc >/dev/null; then
  echo "setup: nvcc not found; install the CUDA toolkit under /usr/local/cuda" >&2
  exit 1
fi
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"

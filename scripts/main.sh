#!/usr/bin/env bash
# The main job: builds ptxbench and evaluates the bundled GEMM kernels on this host's GPU,
# printing the verdict table (needs an sm_90a GPU, compute-sanitizer, ncu and cuobjdump).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
exec build/bin/ptxbench eval gemm_n7168_k5120 tests/fixtures/gemm/*.cu "$@"

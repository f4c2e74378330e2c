#!/usr/bin/env bash
# The main job: builds ptxbench and evaluates the bundled GEMM fixture suite on this host's GPU,
# printing each verdict next to the expected one (needs an sm_90a GPU, compute-sanitizer, ncu, cuobjdump).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
exec build/bin/ptxbench suite run tests/fixtures/gemm/suite.json "$@"

#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs every test. GPU tests (label gpu)
# report "skipped" on a machine without a usable CUDA device.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
ctest --preset release "$@"

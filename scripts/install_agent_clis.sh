#!/usr/bin/env bash
# Installs the coding-agent CLIs that `ptxbench agent run` drives (pinned, from npm) into
# third_party/agents/ and prints that folder's path on stdout: Codex (@openai/codex, whose npm
# package carries its Linux binary) and opencode (opencode-ai, likewise). The end-to-end CPU test
# tests/cpu/coding_agent/test_agent_cli.cpp drives each installed one with a scripted model behind
# `ptxbench proxy`; without this install it skips. Both run offline once installed
# (docs/coding_agents.md says what each needs). About 750 MB.
# Idempotent: a no-op when the pinned versions are in place (scripts/npm_pinned.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/npm_pinned.sh"
prefix=$root/third_party/agents
# Pinned exactly: the adapters (src/coding_agent/agent_cli.cpp) write these versions' config
# formats and read their JSON events.
npm_pinned install_agent_clis "$prefix" "Coding-agent CLIs driven by ptxbench agent run" \
  @openai/codex 0.169.0 opencode-ai 1.18.33
for bin in codex opencode; do
  [ -x "$prefix/node_modules/.bin/$bin" ] || { echo "install_agent_clis: $bin is missing after the install" >&2; exit 1; }
done
echo "$prefix"

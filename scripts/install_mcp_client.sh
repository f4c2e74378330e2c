#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned) from npm into
# third_party/mcp/ and prints that folder's path on stdout. The CPU test
# tests/cpu/mcp/test_mcp_with_sdk_client.cpp drives `ptxbench mcp` with the SDK's own Client and
# StdioClientTransport (tests/helpers/mcp_client.mjs); without this install it skips.
# Idempotent: a no-op when the pinned version is in place (scripts/npm_pinned.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/npm_pinned.sh"
prefix=$root/third_party/mcp
# Pinned exactly: the test checks our server against what this client version negotiates.
npm_pinned install_mcp_client "$prefix" "The MCP client that tests ptxbench's MCP server" @modelcontextprotocol/sdk 1.32.2
echo "$prefix"

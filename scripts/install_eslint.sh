#!/usr/bin/env bash
# Installs ESLint and its recommended rules (both pinned) from npm into third_party/eslint/ and
# prints that folder's path on stdout. scripts/lint.sh runs it over the HTML report's script
# (src/report/assets/, config eslint.config.cjs); the CTest test lint.js fails without it.
# Idempotent: a no-op when the pinned versions are in place (scripts/npm_pinned.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/npm_pinned.sh"
prefix=$root/third_party/eslint
# ESLint 9 runs on Debian 12's Node 18 too; @eslint/js pinned to the same release (the config
# requires it, and ESLint asks for it exactly).
npm_pinned install_eslint "$prefix" "ESLint for ptxbench's JavaScript" eslint 9.39.4 @eslint/js 9.39.4
echo "$prefix"

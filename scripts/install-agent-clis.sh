#!/usr/bin/env bash
# Installs the coding-agent CLIs the real-CLI tests drive, at pinned versions, into
# .cache/agent-clis/<name>/ (git-ignored). Each CLI gets its own folder with its own
# package.json, so one CLI's dependencies never move another's. A folder whose stamp
# already names the pinned packages is left alone, so a second run costs nothing.
#
# Usage: scripts/install-agent-clis.sh [name...]   (no name: every CLI below)
# Tests find a CLI at .cache/agent-clis/<name>/node_modules/.bin/<bin>.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE_DIR="${AGENT_CLIS_DIR:-.cache/agent-clis}"

# One line per CLI: <name> <bin> <package@version>... (the native platform package
# is named explicitly, so an install never depends on optional-dependency resolution).
CLIS=(
  "claude claude @anthropic-ai/claude-code@2.1.197 @anthropic-ai/claude-code-linux-x64@2.1.197"
  "codex codex @openai/codex@0.171.0 @openai/codex-linux-x64@npm:@openai/codex@0.171.0-linux-x64"
)

install_cli() {
  local name=$1 bin=$2
  shift 2
  local dir="$CACHE_DIR/$name"
  local stamp="$dir/.installed"
  local want="$*"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$dir/node_modules/.bin/$bin" ]; then
    echo "agent CLI $name: already installed ($want)"
    return 0
  fi
  echo "agent CLI $name: installing $want"
  rm -rf "$dir"
  mkdir -p "$dir"
  printf '{ "name": "agent-cli-%s", "private": true }\n' "$name" >"$dir/package.json"
  # Scripts stay on: the Claude Code package links its native binary in a postinstall step.
  npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error "$@"
  if [ ! -x "$dir/node_modules/.bin/$bin" ]; then
    echo "agent CLI $name: $dir/node_modules/.bin/$bin is missing after the install" >&2
    return 1
  fi
  printf '%s' "$want" >"$stamp"
  echo "agent CLI $name: installed at $dir/node_modules/.bin/$bin"
}

selected=("$@")
for line in "${CLIS[@]}"; do
  read -r -a fields <<<"$line"
  name=${fields[0]}
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  install_cli "${fields[@]}"
done

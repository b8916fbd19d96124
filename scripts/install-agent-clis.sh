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
  "copilot copilot @github/copilot@1.0.102 @github/copilot-linux-x64@1.0.102"
  "opencode opencode opencode-ai@1.18.33 opencode-linux-x64@1.18.33"
  "gemini gemini @google/gemini-cli@0.61.0"
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
  check_version "$name" "$dir" "$bin"
  printf '%s' "$want" >"$stamp"
  echo "agent CLI $name: installed at $dir/node_modules/.bin/$bin"
}

# Runs `<bin> --version` once after an install, so a broken install fails here and not in a
# test. HOME and the XDG folders point at a scratch folder (the CLIs write state on any start),
# except the cache: Copilot unpacks its runtime (about 235 MB) into $XDG_CACHE_HOME/copilot on
# its first start, and the tests share this warmed copy in <dir>/.xdg-cache.
check_version() {
  local name=$1 dir=$2 bin=$3
  local scratch
  scratch=$(mktemp -d)
  local version
  if ! version=$(env -i PATH="$PATH" HOME="$scratch" TERM=dumb LANG=C.UTF-8 \
    XDG_CONFIG_HOME="$scratch/.config" XDG_DATA_HOME="$scratch/.local/share" \
    XDG_STATE_HOME="$scratch/.local/state" XDG_CACHE_HOME="$dir/.xdg-cache" \
    COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false \
    "$dir/node_modules/.bin/$bin" --version </dev/null 2>&1); then
    rm -rf "$scratch"
    echo "agent CLI $name: \`$bin --version\` failed: $version" >&2
    return 1
  fi
  rm -rf "$scratch"
  echo "agent CLI $name: $(printf '%s' "$version" | head -n 1)"
}

selected=("$@")
for line in "${CLIS[@]}"; do
  read -r -a fields <<<"$line"
  name=${fields[0]}
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  install_cli "${fields[@]}"
done

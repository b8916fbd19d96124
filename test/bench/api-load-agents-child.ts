/**
 * The `api-load` benchmark's stand-in load: starts the same agent processes the service
 * would (the built mock runtime, the same prompt on stdin, the same line delay), all at
 * once, reads their output and throws it away, until it is killed. Run as its own process
 * so that its spawns (which block an event loop) never delay the bench's measurements.
 *
 * argv: <runtime.js> <count> <prompt file> <line delay ms> <working directory>
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const [runtime, countText, promptFile, lineDelayMs, cwd] = process.argv.slice(2);
if (runtime === undefined || promptFile === undefined || lineDelayMs === undefined || cwd === undefined)
  throw new Error('usage: api-load-agents-child <runtime.js> <count> <prompt file> <line delay ms> <cwd>');
const prompt = readFileSync(promptFile, 'utf8');
for (let i = 0; i < Number(countText); i++) {
  const child = spawn(process.execPath, [runtime], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      ORCHESTRATOR_MOCK_LINE_DELAY_MS: lineDelayMs,
      ORCHESTRATOR_MOCK_SESSION_ID: `contended-${i + 1}`,
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  child.stdin.end(prompt);
  child.stdout.resume();
}

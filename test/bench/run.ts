/**
 * Benchmarks, run by `npm run bench` (never as tests: timings on a shared
 * machine are evidence, not pass/fail). Each prints its figures and its target.
 */
import { agentOutput } from './agent-output.js';
import { apiLoad } from './api-load.js';
import { claudeParse } from './claude-parse.js';
import { codexWorkload } from './codex-workload.js';
import { fileTracker } from './file-tracker.js';
import { githubPoll } from './github-poll.js';
import { orchestratorMemory } from './orchestrator-memory.js';
import { orchestratorThroughput } from './orchestrator-throughput.js';
import { parseThroughput } from './parse-throughput.js';
import { sshLaunch } from './ssh-launch.js';
import { validateStartup } from './validate-startup.js';

const benches: Record<string, () => Promise<void> | void> = {
  'validate-startup': validateStartup,
  'parse-throughput': parseThroughput,
  'claude-parse': claudeParse,
  'orchestrator-throughput': orchestratorThroughput,
  'orchestrator-memory': orchestratorMemory,
  'api-load': apiLoad,
  'agent-output': agentOutput,
  'github-poll': githubPoll,
  'file-tracker': fileTracker,
  'ssh-launch': sshLaunch,
  'codex-workload': codexWorkload,
};

const only = process.argv[2];
for (const [name, bench] of Object.entries(benches)) {
  if (only !== undefined && only !== name) continue;
  console.log(`## ${name}`);
  await bench();
}

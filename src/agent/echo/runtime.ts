/**
 * The echo runtime: simulate mode. No model is called; it writes three steps
 * spread over a delay, reports 100 input and 50 output tokens and one cent, and
 * finishes with "Echo: <identifier> <title> done." A configured fraction of runs
 * fails instead, so retry paths can be exercised without any credential. It
 * writes the same JSON-lines stream as the mock runtime.
 */

const delayMs = Math.max(0, Number(process.env.ORCHESTRATOR_ECHO_DELAY_MS ?? 1500) || 0);
const failRate = Math.min(1, Math.max(0, Number(process.env.ORCHESTRATOR_ECHO_FAIL_RATE ?? 0) || 0));
const identifier = process.env.ORCHESTRATOR_ECHO_IDENTIFIER ?? '';
const title = process.env.ORCHESTRATOR_ECHO_TITLE ?? '';
const STEPS = 3;

function write(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(): Promise<number> {
  write({ type: 'start', session_id: `echo-${process.pid}-${Date.now()}`, model: 'echo' });
  for (let step = 1; step <= STEPS; step++) {
    await sleep(delayMs / STEPS);
    write({ type: 'notice', text: `echo step ${step} of ${STEPS}` });
  }
  write({
    type: 'message',
    id: `echo-${process.pid}-${Date.now()}`,
    model: 'echo',
    text: 'echo',
    usage: { input: 100, output: 50, cache_read: 0 },
    cost_usd: 0.01,
  });
  if (Math.random() < failRate) {
    write({ type: 'result', status: 'error', text: 'echo failure (fail_rate)' });
    return 1;
  }
  const summary =
    identifier === '' && title === '' ? 'Echo: heartbeat done.' : `Echo: ${identifier} ${title} done.`;
  write({ type: 'result', status: 'success', text: summary });
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  () => {
    process.exitCode = 70;
  },
);

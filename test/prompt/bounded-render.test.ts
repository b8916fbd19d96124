/**
 * Rendering must not stall the service. Liquid renders synchronously, so a template that loops
 * for seconds used to hold the event loop (HTTP API, timers, other workers) for the whole render
 * limit, on every dispatch and four times on every reload. A render on the loop now stops within
 * tens of milliseconds, and a turn's render that needs more runs on a thread that can be stopped.
 * Bounds are generous: they tell "the loop kept running" from "the loop froze for seconds".
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { renderBounded, renderOffThread, turnPromptBounded } from '../../src/prompt/bounded-render.js';
import { checkTemplate } from '../../src/prompt/check.js';
import { LOOP_RENDER_LIMITS, RUN_RENDER_LIMITS } from '../../src/prompt/engine.js';
import { DEFAULT_CONTINUATION_PROMPT, PATIENT_RENDER_LIMITS, renderPrompt } from '../../src/prompt/render.js';
import { compilePrompt, type PromptTemplate } from '../../src/prompt/template.js';
import { type PromptVariables, promptVariables, SAMPLE_ISSUE } from '../../src/prompt/variables.js';

const ORIGIN = { file: 'WORKFLOW.md', line: 12, column: 1 };

/**
 * Longest the event loop may stall while a runaway render is dealt with. A render on the loop
 * stops at 50 ms; the margin is for a CI machine whose two cores run other test files at the
 * same time (a descheduled process looks stalled), while the old behaviour stalled for seconds.
 */
const LOOP_STALL_LIMIT_MS = 1_000;

/** How often the watcher expects to run; a longer gap between two runs is a stall. */
const TICK_MS = 10;

/** Eight nested loops over ten items: a hundred million iterations that allocate next to nothing. */
const ENDLESS_LOOP = `Start.\n{% assign xs = "0123456789" | split: "" %}${'{% for x in xs %}'.repeat(8)}${'{% endfor %}'.repeat(8)}`;

/** One filter call over millions of items: Liquid looks at its clock only after it returns. */
const ONE_LONG_FILTER = '{% assign sorted = (1..7000000) | sort_natural %}{{ sorted | size }}';

function compile(source: string): PromptTemplate {
  const result = compilePrompt(source, ORIGIN);
  if (!result.ok) throw new Error(result.diagnostics.map((d) => d.message).join('; '));
  return result.template;
}

function vars(turn = 1, description = SAMPLE_ISSUE.description): PromptVariables {
  return promptVariables({
    issue: { ...SAMPLE_ISSUE, description },
    attempt: 1,
    turn,
    maxTurns: 5,
    workspacePath: '/ws/ENG-42',
  });
}

/**
 * Runs `work` while a ticker measures the longest gap between its ticks; returns the result, the
 * wall time and the worst stall. The last gap is measured after `work` too, so a stall that
 * lasts to the very end (a synchronous render) is not missed.
 */
async function watchLoop<T>(
  work: () => Promise<T>,
): Promise<{ value: T; elapsedMs: number; worstStallMs: number }> {
  let lastTickAt = performance.now();
  let worstGapMs = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worstGapMs = Math.max(worstGapMs, now - lastTickAt);
    lastTickAt = now;
  }, TICK_MS);
  const startedAt = performance.now();
  try {
    const value = await work();
    const elapsedMs = performance.now() - startedAt;
    worstGapMs = Math.max(worstGapMs, performance.now() - lastTickAt);
    return { value, elapsedMs, worstStallMs: worstGapMs - TICK_MS };
  } finally {
    clearInterval(ticker);
  }
}

beforeAll(async () => {
  // Start the thread first, so the timings below are renders, not the thread's start-up.
  const warm = await renderOffThread(compile('ready'), vars());
  expect(warm).toEqual({ ok: true, text: 'ready' });
}, 120_000);

describe('a turn render never stalls the event loop', () => {
  it('a template that loops for seconds fails as template.render_limit within the run limit, while the loop keeps running', async () => {
    const { value, elapsedMs, worstStallMs } = await watchLoop(() =>
      turnPromptBounded(compile(ENDLESS_LOOP), vars()),
    );
    expect(value).toEqual({
      ok: false,
      diagnostics: [expect.objectContaining({ code: 'template.render_limit', line: 13 })],
    });
    if (!value.ok) expect(value.diagnostics[0]?.message).toContain(`${RUN_RENDER_LIMITS.timeMs} ms`);
    expect(elapsedMs).toBeLessThan(RUN_RENDER_LIMITS.timeMs + 3_000);
    expect(worstStallMs).toBeLessThan(LOOP_STALL_LIMIT_MS);
  }, 30_000);

  it('one filter call that never returns to Liquid is stopped by ending its thread, and the next render still works', async () => {
    const { value, elapsedMs, worstStallMs } = await watchLoop(() =>
      turnPromptBounded(compile(ONE_LONG_FILTER), vars()),
    );
    expect(value).toEqual({
      ok: false,
      diagnostics: [expect.objectContaining({ code: 'template.render_limit' })],
    });
    expect(elapsedMs).toBeLessThan(RUN_RENDER_LIMITS.timeMs + 3_000);
    expect(worstStallMs).toBeLessThan(LOOP_STALL_LIMIT_MS);
    const next = await renderOffThread(compile('Fix {{ issue.identifier }}'), vars());
    expect(next).toEqual({ ok: true, text: 'Fix ENG-42' });
  }, 120_000);

  it('three runaway dispatches at once never stall the loop: they queue on the thread', async () => {
    const template = compile(ENDLESS_LOOP);
    const { value, worstStallMs } = await watchLoop(() =>
      Promise.all([1, 2, 3].map(() => turnPromptBounded(template, vars()))),
    );
    expect(value.map((result) => result.ok)).toEqual([false, false, false]);
    expect(worstStallMs).toBeLessThan(LOOP_STALL_LIMIT_MS);
  }, 60_000);

  it('a huge range fails on the memory limit of the run, naming it, instead of allocating', async () => {
    const result = await renderBounded(compile('{% for i in (1..100000000) %}x{% endfor %}'), vars());
    expect(result).toEqual({
      ok: false,
      diagnostics: [expect.objectContaining({ code: 'template.render_limit' })],
    });
    if (!result.ok) expect(result.diagnostics[0]?.message).toContain(String(RUN_RENDER_LIMITS.memoryUnits));
  }, 30_000);

  it('a real prompt over an issue too large for the loop limits still renders, on the thread', async () => {
    const description = 'A long log line.\n'.repeat(40_000);
    expect(description.length).toBeGreaterThan(LOOP_RENDER_LIMITS.memoryUnits);
    const template = compile('{{ issue.description | strip | truncate: 40 }}');
    expect(renderPrompt(template, vars(1, description)).ok).toBe(false);
    expect(await renderBounded(template, vars(1, description))).toEqual({
      ok: true,
      text: `${description.slice(0, 37)}...`,
    });
  }, 30_000);

  it('a bounded render gives the same text and diagnostics as a plain one', async () => {
    for (const source of ['Fix {{ issue.identifier }}: {{ issue.title }}', 'Line\n  {{ issue.nope }}']) {
      const template = compile(source);
      expect(await renderBounded(template, vars())).toEqual(renderPrompt(template, vars()));
      expect(await renderOffThread(template, vars())).toEqual(renderPrompt(template, vars()));
    }
  }, 30_000);

  it('a continuation turn keeps its rules: guidance for a template that does not read run.is_continuation', async () => {
    const result = await turnPromptBounded(compile('Fix {{ issue.identifier }}'), vars(2));
    expect(result).toEqual({ ok: true, text: DEFAULT_CONTINUATION_PROMPT });
  });
});

describe('renders on the event loop (validate and reload)', () => {
  it('the loop watcher sees a render that runs on the loop, so the stall bounds above mean something', async () => {
    const template = compile(ENDLESS_LOOP);
    const { value, worstStallMs } = await watchLoop(async () =>
      renderPrompt(template, vars(), {
        timeMs: 2 * LOOP_STALL_LIMIT_MS,
        memoryUnits: RUN_RENDER_LIMITS.memoryUnits,
      }),
    );
    expect(value.ok).toBe(false);
    expect(worstStallMs).toBeGreaterThan(LOOP_STALL_LIMIT_MS);
  });

  it('checking a template that loops for seconds stops at the patient limit once, not at the run limit four times', () => {
    const startedAt = performance.now();
    const diagnostics = checkTemplate(ENDLESS_LOOP, ORIGIN);
    const elapsedMs = performance.now() - startedAt;
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'template.render_limit', line: 13 })]);
    // The loop's limit, then the one retry a busy machine gets, and no more.
    const { first, retry } = PATIENT_RENDER_LIMITS;
    expect(diagnostics[0]?.message).toContain(`${retry.timeMs} ms`);
    expect(elapsedMs).toBeLessThan((first.timeMs + retry.timeMs) * 2);
  });
});

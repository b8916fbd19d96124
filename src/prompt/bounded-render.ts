/**
 * Renders a turn's prompt without stalling the service. Liquid renders synchronously: on the
 * event loop, a template that loops for seconds (or sorts a list of millions) holds the HTTP
 * API, every timer and every other worker until it ends, once per dispatch.
 *
 * So a render is first tried on the loop within limits of tens of milliseconds, which every
 * ordinary prompt fits in with room to spare. One that needs more (a runaway loop, or a real
 * prompt over a very large issue) is rendered again on a worker thread within the run limits,
 * where the loop stays free and an overrun is stopped by terminating the thread; that also ends
 * a single filter call that Liquid's own clock check never gets to interrupt.
 *
 * One thread serves the process, started on first need, and renders one request at a time, so
 * a render's clock starts when it reaches the thread, not while it waits behind another. It is
 * unreferenced while idle: it never keeps the process alive on its own.
 */
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { RENDER_LIMIT_CODE, renderTimeLimitDiagnostic } from './diagnose.js';
import { LOOP_RENDER_LIMITS, type RenderLimits, RUN_RENDER_LIMITS } from './engine.js';
import {
  blankContinuationAsGuidance,
  DEFAULT_CONTINUATION_PROMPT,
  type RenderResult,
  renderPrompt,
  sendsGuidance,
} from './render.js';
import type { RenderRequest, RenderThreadMessage } from './render-thread.js';
import type { PromptTemplate } from './template.js';
import type { PromptVariables } from './variables.js';

/** Time a render gets past its own limit before its thread is terminated. */
const STOP_GRACE_MS = 500;

/** Longest a new thread may take to start (loading TypeScript under tests is the slow case). */
const THREAD_START_LIMIT_MS = 60_000;

/** Heap of the render thread: a runaway render runs out of it instead of the service's. */
const THREAD_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 512 };

interface RenderThread {
  worker: Worker;
  /** Settles with null once the thread is ready, or with why it never became ready. */
  ready: Promise<string | null>;
}

let current: RenderThread | null = null;
let queue: Promise<unknown> = Promise.resolve();
let nextRequestId = 1;

/**
 * The prompt for one turn, as `turnPrompt` decides it, rendered by `renderBounded`. Called by
 * the orchestrator's worker before each turn; never rejects.
 */
export async function turnPromptBounded(
  template: PromptTemplate,
  vars: PromptVariables,
): Promise<RenderResult> {
  if (sendsGuidance(template, vars)) return { ok: true, text: DEFAULT_CONTINUATION_PROMPT };
  return blankContinuationAsGuidance(await renderBounded(template, vars), vars);
}

/**
 * Renders on the loop within `LOOP_RENDER_LIMITS`; a render that hits one of them is rendered
 * again on the render thread within `RUN_RENDER_LIMITS`. Never rejects.
 */
export async function renderBounded(template: PromptTemplate, vars: PromptVariables): Promise<RenderResult> {
  // Several dispatches in one tick each get their own turn of the loop: their tries on the
  // loop never add up to one long stall.
  await new Promise<void>((resolve) => setImmediate(resolve));
  const onLoop = renderPrompt(template, vars, LOOP_RENDER_LIMITS);
  if (onLoop.ok || !onLoop.diagnostics.some((d) => d.code === RENDER_LIMIT_CODE)) return onLoop;
  return renderOffThread(template, vars, RUN_RENDER_LIMITS);
}

/**
 * Renders on the render thread within `limits` (the thread compiles the template's source with
 * the runtime engine); an overrun fails as `template.render_limit`. Never rejects.
 */
export function renderOffThread(
  template: PromptTemplate,
  vars: PromptVariables,
  limits: RenderLimits = RUN_RENDER_LIMITS,
): Promise<RenderResult> {
  const result = queue.then(() => renderNext(template, vars, limits));
  queue = result.catch(() => undefined);
  return result;
}

async function renderNext(
  template: PromptTemplate,
  vars: PromptVariables,
  limits: RenderLimits,
): Promise<RenderResult> {
  let thread: RenderThread;
  try {
    thread = current ?? startThread();
  } catch (error) {
    return threadFailure(template, `the render thread cannot start: ${describe(error)}`);
  }
  current = thread;
  // Referenced while a render is pending, so a service waiting on nothing else does not exit under it.
  thread.worker.ref();
  try {
    const startFailure = await thread.ready;
    if (startFailure !== null) {
      stop(thread);
      return threadFailure(template, `the render thread did not start: ${startFailure}`);
    }
    return await exchange(thread, template, vars, limits);
  } finally {
    if (current === thread) thread.worker.unref();
  }
}

/** Posts one request and waits for its answer, the thread's death, or the time limit. */
function exchange(
  thread: RenderThread,
  template: PromptTemplate,
  vars: PromptVariables,
  limits: RenderLimits,
): Promise<RenderResult> {
  const id = nextRequestId++;
  return new Promise<RenderResult>((resolve) => {
    const finish = (result: RenderResult) => {
      clearTimeout(timer);
      thread.worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      resolve(result);
    };
    const onMessage = (message: RenderThreadMessage) => {
      if (message.type === 'rendered' && message.id === id) finish(message.result);
    };
    const onError = (error: Error) => {
      stop(thread);
      finish(threadFailure(template, `the render thread failed: ${error.message}`));
    };
    const onExit = (code: number) => {
      stop(thread);
      finish(threadFailure(template, `the render thread exited with code ${code}`));
    };
    const timer = setTimeout(() => {
      stop(thread);
      finish({
        ok: false,
        diagnostics: [renderTimeLimitDiagnostic(template.origin, template.origin, limits.timeMs)],
      });
    }, limits.timeMs + STOP_GRACE_MS);
    thread.worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    const request: RenderRequest = { id, source: template.source, origin: template.origin, vars, limits };
    try {
      thread.worker.postMessage(request);
    } catch (error) {
      finish(
        threadFailure(
          template,
          `the prompt variables cannot be sent to the render thread: ${describe(error)}`,
        ),
      );
    }
  });
}

function startThread(): RenderThread {
  const worker = createWorker();
  // A thread that dies between renders must not take the process with it as an unhandled
  // 'error' event; a render in flight hears of it through its own listener.
  worker.on('error', () => undefined);
  const ready = new Promise<string | null>((resolve) => {
    const settle = (failure: string | null) => {
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      resolve(failure);
    };
    const onMessage = (message: RenderThreadMessage) => {
      if (message.type === 'ready') settle(null);
    };
    const onError = (error: Error) => settle(error.message);
    const onExit = (code: number) => settle(`it exited with code ${code}`);
    const timer = setTimeout(
      () => settle(`not ready after ${THREAD_START_LIMIT_MS} ms`),
      THREAD_START_LIMIT_MS,
    );
    timer.unref();
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
  worker.unref();
  return { worker, ready };
}

/**
 * The thread runs the compiled render-thread.js beside this file. Run from source (tests, tsx)
 * this file is TypeScript and so is the entry, which a worker cannot load without tsx's loader:
 * the worker registers it first.
 */
function createWorker(): Worker {
  const options = { resourceLimits: THREAD_RESOURCE_LIMITS };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./render-thread.js', import.meta.url), options);
  const entry = new URL('./render-thread.ts', import.meta.url).href;
  // tsx's public ESM API, resolved from here (an eval'd worker would resolve from the cwd).
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

function stop(thread: RenderThread): void {
  if (current === thread) current = null;
  void thread.worker.terminate();
}

function threadFailure(template: PromptTemplate, reason: string): RenderResult {
  return {
    ok: false,
    diagnostics: [
      {
        severity: 'error',
        code: 'template.render',
        message: `template render error: ${reason}`,
        file: template.origin.file,
        line: template.origin.line,
        column: template.origin.column,
      },
    ],
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

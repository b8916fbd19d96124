/**
 * Entry of the prompt render thread that off-thread.ts starts. It compiles each template once
 * and answers render requests one at a time with the same `renderPrompt` the main thread uses,
 * so a render reads the same whichever thread ran it. The main thread owns the clock: when a
 * render overruns, it terminates this thread and starts a fresh one.
 */
import { parentPort } from 'node:worker_threads';
import type { PromptOrigin } from './diagnose.js';
import type { RenderLimits } from './engine.js';
import { type RenderResult, renderPrompt } from './render.js';
import { type CompileResult, compilePrompt } from './template.js';
import type { PromptVariables } from './variables.js';

/** One render, as posted by the main thread. */
export interface RenderRequest {
  id: number;
  source: string;
  origin: PromptOrigin;
  vars: PromptVariables;
  limits: RenderLimits;
}

/** What this thread posts: once `ready` after start, then one `rendered` per request. */
export type RenderThreadMessage = { type: 'ready' } | { type: 'rendered'; id: number; result: RenderResult };

/** Templates kept compiled; a reload brings a new one, old ones age out. */
const MAX_COMPILED_TEMPLATES = 8;

const compiled = new Map<string, CompileResult>();

function compileOnce(source: string, origin: PromptOrigin): CompileResult {
  const key = JSON.stringify([origin.file, origin.line, origin.column, source]);
  const known = compiled.get(key);
  if (known !== undefined) return known;
  const result = compilePrompt(source, origin);
  compiled.set(key, result);
  const oldest = compiled.keys().next().value;
  if (compiled.size > MAX_COMPILED_TEMPLATES && oldest !== undefined) compiled.delete(oldest);
  return result;
}

function render(request: RenderRequest): RenderResult {
  const template = compileOnce(request.source, request.origin);
  if (!template.ok) return { ok: false, diagnostics: template.diagnostics };
  return renderPrompt(template.template, request.vars, request.limits);
}

const port = parentPort;
if (port !== null) {
  port.on('message', (request: RenderRequest) => {
    const reply: RenderThreadMessage = { type: 'rendered', id: request.id, result: render(request) };
    port.postMessage(reply);
  });
  const ready: RenderThreadMessage = { type: 'ready' };
  port.postMessage(ready);
}

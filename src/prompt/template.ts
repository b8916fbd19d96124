/**
 * Compiles the WORKFLOW.md prompt body once so every turn only renders. Parse problems come back
 * as diagnostics in file coordinates, never as exceptions: a bad template must fail `validate`
 * or a reload cleanly, not crash the orchestrator.
 */

import type { Liquid, Template } from 'liquidjs';
import type { Diagnostic } from '../domain/diagnostic.js';
import { type ContinuationSource, continuationSource } from './continuation.js';
import { diagnosticsFromError, type PromptOrigin } from './diagnose.js';
import { RUNTIME_ENGINE } from './engine.js';

export type { PromptOrigin } from './diagnose.js';

/** A parsed prompt, ready to render many times. Build it with `compilePrompt`. */
export interface PromptTemplate {
  /** The template text as given. */
  readonly source: string;
  /** Where `source` begins in its file; every diagnostic is translated through it. */
  readonly origin: PromptOrigin;
  /** The engine that parsed it (and must render it). */
  readonly engine: Liquid;
  /** Liquid's parse tree. */
  readonly parsed: Template[];
  /** What continuation turns send: this template (it reads `run.is_continuation`) or the built-in guidance. */
  readonly continuation: ContinuationSource;
}

/** Outcome of compiling a prompt: the template, or diagnostics positioned in the original file. */
export type CompileResult = { ok: true; template: PromptTemplate } | { ok: false; diagnostics: Diagnostic[] };

/** Parses a prompt body that starts at `origin` in its file; never throws. */
export function compilePrompt(source: string, origin: PromptOrigin): CompileResult {
  return compileWith(RUNTIME_ENGINE, source, origin);
}

/** Parses with a given engine; `check.ts` uses it for the validate-time engine. */
export function compileWith(engine: Liquid, source: string, origin: PromptOrigin): CompileResult {
  try {
    const parsed = engine.parse(source);
    const continuation = continuationSource(engine, parsed);
    return { ok: true, template: { source, origin: { ...origin }, engine, parsed, continuation } };
  } catch (err) {
    return { ok: false, diagnostics: diagnosticsFromError(err, origin, 'parse') };
  }
}

/**
 * The three ways `validate` prints diagnostics: like a compiler (text), as a
 * stable JSON document for tools, and as GitHub Actions workflow commands so a
 * pull request gets inline annotations.
 */
import path from 'node:path';
import type { Diagnostic } from '../domain/diagnostic.js';
import type { ContinuationSource } from '../prompt/continuation.js';

export const OUTPUT_FORMATS = ['text', 'json', 'github'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Version of the JSON shape; bumped only on an incompatible change. */
export const JSON_SCHEMA_VERSION = 1;

/** What `validate` reports about a workflow that loaded, beside its diagnostics. */
export interface WorkflowFacts {
  /** What continuation turns send: the template, or the built-in guidance. */
  continuationTurns: ContinuationSource;
}

/** The text line for the continuation rule, so an author sees which one applies. */
const CONTINUATION_LINE: Record<ContinuationSource, string> = {
  template: 'continuation turns: template (it reads run.is_continuation)',
  guidance: 'continuation turns: built-in guidance (the template does not read run.is_continuation)',
};

/**
 * Formats diagnostics of one file; `cwd` makes paths relative for readability. `facts` (null when
 * the workflow did not load, or not given) adds a line to text and a field to json; github output
 * stays annotations only.
 */
export function formatDiagnostics(
  format: OutputFormat,
  file: string,
  diagnostics: readonly Diagnostic[],
  cwd: string,
  facts: WorkflowFacts | null = null,
): string {
  const shown = (p: string) => {
    const rel = path.relative(cwd, p);
    return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel) ? rel : p;
  };
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.filter((d) => d.severity === 'warning').length;
  const infos = diagnostics.length - errors - warnings;
  switch (format) {
    case 'text': {
      const lines = diagnostics.map((d) => {
        const where = d.line === null ? shown(d.file) : `${shown(d.file)}:${d.line}:${d.column ?? 1}`;
        return `${where} ${d.severity} ${d.code}: ${d.message}`;
      });
      if (facts !== null) lines.push(`${shown(file)}: ${CONTINUATION_LINE[facts.continuationTurns]}`);
      // Notes are counted only when there are some, so a plain file's summary reads as before.
      const notes = infos > 0 ? `, ${count(infos, 'note')}` : '';
      lines.push(`${shown(file)}: ${count(errors, 'error')}, ${count(warnings, 'warning')}${notes}`);
      return `${lines.join('\n')}\n`;
    }
    case 'json':
      return `${JSON.stringify(
        {
          version: JSON_SCHEMA_VERSION,
          file: shown(file),
          valid: errors === 0,
          errors,
          warnings,
          infos,
          diagnostics: diagnostics.map((d) => ({
            severity: d.severity,
            code: d.code,
            message: d.message,
            file: shown(d.file),
            line: d.line,
            column: d.column,
            path: d.path ?? null,
          })),
          continuation_turns: facts?.continuationTurns ?? null,
        },
        null,
        2,
      )}\n`;
    case 'github':
      return diagnostics
        .map((d) => {
          const props = [`file=${escapeProperty(shown(d.file))}`];
          if (d.line !== null) props.push(`line=${d.line}`, `col=${d.column ?? 1}`);
          props.push(`title=${escapeProperty(d.code)}`);
          // Actions has no `info` command; `notice` is its informational annotation.
          const command = d.severity === 'info' ? 'notice' : d.severity;
          return `::${command} ${props.join(',')}::${escapeData(d.message)}\n`;
        })
        .join('');
  }
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Workflow-command data escaping: a stray newline would end the annotation early. */
function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

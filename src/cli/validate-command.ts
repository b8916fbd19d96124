/**
 * `orchestrator validate`: the CI use case. Loads the workflow exactly as the
 * service would, renders the prompt against a sample issue, and prints every
 * diagnostic at once.
 */
import { hasWarnings } from '../domain/diagnostic.js';
import { loadWorkflow } from '../workflow/load.js';
import { kindCatalog } from './catalog.js';
import { formatDiagnostics, type OutputFormat } from './diagnostics-format.js';

export interface ValidateOptions {
  format: OutputFormat;
  strict: boolean;
  envFile?: string;
}

/** Runs validate and returns the exit code: 0 clean, 1 errors (or warnings under strict; notes never fail). */
export function runValidate(
  workflowPath: string,
  options: ValidateOptions,
  out: (text: string) => void,
): number {
  const result = loadWorkflow(workflowPath, {
    env: process.env,
    kinds: kindCatalog(),
    checkRender: true,
    // Validate may run where the issues file or SSH key is provisioned later (CI): a warning,
    // which --strict turns into a failure; `run` refuses to start without them.
    localFiles: 'warning',
    ...(options.envFile !== undefined ? { envFile: options.envFile } : {}),
  });
  const diagnostics = result.ok ? result.workflow.diagnostics : result.diagnostics;
  const facts = result.ok ? { continuationTurns: result.workflow.template.continuation } : null;
  out(formatDiagnostics(options.format, workflowPath, diagnostics, process.cwd(), facts));
  if (!result.ok) return 1;
  return options.strict && hasWarnings(diagnostics) ? 1 : 0;
}

/**
 * Loading runs on the service's event loop, so a huge WORKFLOW.md must be refused quickly and a
 * large legal one must load in time proportional to its size. Each key used to be located (and
 * checked for duplicates) by scanning its whole map, so 10,000 keys took 14 s and 100,000 never
 * finished. Bounds here are generous on purpose: they separate "linear" from "quadratic", not
 * fast machines from slow ones.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kindCatalog } from '../../src/cli/catalog.js';
import type { Diagnostic } from '../../src/domain/diagnostic.js';
import { WORKFLOW_MAX_ENTRIES, WORKFLOW_MAX_SIZE_BYTES } from '../../src/workflow/limits.js';
import { loadWorkflow } from '../../src/workflow/load.js';

const file = path.join('/nonexistent', 'WORKFLOW.md');

const HEAD = `tracker:
  kind: file
  active_states: [Todo]
  handoff_state: Review
file: {path: issues.json}
agent:
  kind: mock
`;

/** A workflow whose front matter is HEAD plus `extra` (9 lines: the extra keys start at line 9). */
function workflow(extra: string, body = 'Work on {{ issue.title }}.'): string {
  return `---\n${HEAD}${extra}---\n${body}\n`;
}

function unknownKeys(count: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += `k${i}: 1\n`;
  return text;
}

function load(text: string) {
  return loadWorkflow(file, { env: {}, kinds: kindCatalog(), checkRender: true, text });
}

function diagnosticsOf(result: ReturnType<typeof load>): Diagnostic[] {
  return result.ok ? result.workflow.diagnostics : result.diagnostics;
}

/** Runs `fn` and returns its result with the wall time it took. */
function timed<T>(fn: () => T): { value: T; elapsedMs: number } {
  const startedAt = performance.now();
  const value = fn();
  return { value, elapsedMs: performance.now() - startedAt };
}

describe('workflow size limits', () => {
  it('100,000 unknown keys are refused as workflow.too_large in well under 5 s, not parsed key by key', () => {
    const text = workflow(unknownKeys(100_000));
    // Under the byte limit, so it is the key limit that must stop it.
    expect(Buffer.byteLength(text)).toBeLessThan(WORKFLOW_MAX_SIZE_BYTES);
    const { value: result, elapsedMs } = timed(() => load(text));
    expect(result.ok).toBe(false);
    expect(diagnosticsOf(result)).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'workflow.too_large',
        line: 2,
        message: expect.stringContaining(String(WORKFLOW_MAX_ENTRIES)),
      }),
    ]);
    expect(elapsedMs).toBeLessThan(5_000);
  }, 60_000);

  it('a flow list with 100,000 items counts against the same limit as keys', () => {
    const items = Array.from({ length: 100_000 }, (_, i) => String(i)).join(',');
    const result = load(workflow(`worker:\n  ssh_forward_env: [${items}]\n`));
    expect(diagnosticsOf(result).map((d) => d.code)).toEqual(['workflow.too_large']);
  }, 60_000);

  it('a file over 1 MiB is refused with workflow.too_large naming the limit, whatever it holds', () => {
    const result = load(workflow('', 'x'.repeat(WORKFLOW_MAX_SIZE_BYTES)));
    expect(result.ok).toBe(false);
    expect(diagnosticsOf(result)).toEqual([
      expect.objectContaining({
        code: 'workflow.too_large',
        line: null,
        message: expect.stringContaining(`${WORKFLOW_MAX_SIZE_BYTES} bytes`),
      }),
    ]);
  });

  it('a front matter just under the key limit loads, each unknown key warned at its own line, in well under 5 s', () => {
    const count = WORKFLOW_MAX_ENTRIES - 100;
    const { value: result, elapsedMs } = timed(() => load(workflow(unknownKeys(count))));
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics.slice(0, 3)));
    const warnings = result.workflow.diagnostics;
    expect(warnings).toHaveLength(count);
    expect(warnings.every((d) => d.code === 'config.unknown_key')).toBe(true);
    expect(warnings[0]).toMatchObject({ line: 9, path: 'k0' });
    expect(warnings[count - 1]).toMatchObject({ line: 9 + count - 1, path: `k${count - 1}` });
    expect(elapsedMs).toBeLessThan(5_000);
  }, 60_000);

  it('four times the keys take about four times as long to load, not sixteen', () => {
    const small = workflow(unknownKeys(1_000));
    const large = workflow(unknownKeys(4_000));
    // Best of three, so one descheduling on a busy machine does not decide the ratio; the bound
    // sits halfway between linear (4) and quadratic (16) growth.
    const best = (text: string) => Math.min(...[0, 1, 2].map(() => timed(() => load(text)).elapsedMs));
    load(small);
    const ratio = best(large) / best(small);
    expect(ratio).toBeLessThan(8);
  }, 60_000);
});

describe('many invalid values', () => {
  it('4,000 invalid values are each reported once at their line, in well under 5 s (each used to copy the whole front matter)', () => {
    let byState = '  max_concurrent_agents_by_state:\n';
    for (let i = 0; i < 4_000; i++) byState += `    s${i}: many\n`;
    // HEAD ends with "agent:\n  kind: mock\n", so the map continues the agent block from line 9.
    const { value: result, elapsedMs } = timed(() => load(workflow(byState)));
    const reported = diagnosticsOf(result).filter((d) => d.severity === 'error');
    expect(reported).toHaveLength(4_000);
    expect(reported[3_999]).toMatchObject({
      code: 'agent.max_concurrent_agents_by_state.s3999.invalid',
      line: 10 + 3_999,
    });
    expect(elapsedMs).toBeLessThan(5_000);
  }, 60_000);

  it('two bad entries in one list are each reported once, at their own lines (not a shifted neighbour)', () => {
    const d = diagnosticsOf(
      load(workflow('worker:\n  ssh_forward_env:\n    - 1\n    - GOOD_NAME\n    - 2\n')),
    );
    expect(d.map((x) => [x.code, x.line])).toEqual([
      ['worker.ssh_forward_env.invalid', 11],
      ['worker.ssh_forward_env.invalid', 13],
    ]);
  });
});

describe('duplicate keys', () => {
  it('a repeated key is an error at the repeat, in block maps, flow maps and maps inside lists', () => {
    const d = diagnosticsOf(
      load(
        workflow(
          'polling:\n  interval_ms: 1000\n  interval_ms: 2000\n' +
            'reactions: {ci: {max_retries: 1, max_retries: 2}}\n' +
            'worker:\n  ssh_hosts:\n    - a\nlogging:\n  level: info\n' +
            'tracker: {}\n',
        ),
      ),
    );
    expect(d.filter((x) => x.code === 'workflow.yaml_duplicate_key').map((x) => [x.line, x.message])).toEqual(
      [
        [11, expect.stringContaining('"interval_ms"')],
        [12, expect.stringContaining('"max_retries"')],
        [18, expect.stringContaining('"tracker"')],
      ],
    );
  });

  it('keys equal only as text (1 and "1") are different keys, as YAML says', () => {
    const result = load(workflow('token_rates:\n  1: {}\n  "1": {}\n'));
    expect(diagnosticsOf(result).map((d) => d.code)).not.toContain('workflow.yaml_duplicate_key');
  });
});

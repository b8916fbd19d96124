import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkAdapterSource,
  checkAdapterSources,
  formatSourceViolation,
  isAdapterSource,
  readAdapterSources,
} from './source-checks.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILE = 'src/agent/acme/adapter.ts';

/** Violations of one synthetic adapter file, as `rule@line`. */
function check(text: string): string[] {
  return checkAdapterSource({ path: FILE, text }).map((v) => `${v.rule}@${v.line}`);
}

describe('outcome events', () => {
  it.each(['turn_completed', 'turn_failed', 'turn_cancelled', 'turn_input_required'])(
    'an adapter building a %s event itself is flagged',
    (type) => {
      expect(check(`ctx.emit({ type: '${type}', message: 'x' } as never);`)).toEqual(['outcome-event@1']);
    },
  );

  it('is flagged however the literal is written: quoted key, template literal, as const', () => {
    const text = [
      "const a = { 'type': 'turn_failed' };",
      'const b = { type: `turn_completed` };',
      "const c = { type: 'turn_cancelled' as const };",
    ].join('\n');
    expect(check(text)).toEqual(['outcome-event@1', 'outcome-event@2', 'outcome-event@3']);
  });

  it('reading an outcome type, a type literal, other event types, comments and strings are not flagged', () => {
    const text = [
      "if (e.type === 'turn_failed') count++;",
      "type T = { type: 'turn_failed' };",
      "ctx.emit({ type: 'notification', message: 'turn_failed' });",
      "// ctx.emit({ type: 'turn_failed' })",
      'const s = "{ type: \'turn_completed\' }";',
      "const terminal = { type: 'success', message: 'done' };",
    ].join('\n');
    expect(check(text)).toEqual([]);
  });
});

describe('AgentError', () => {
  it.each(['agent_not_found', 'invalid_workspace_cwd'])(
    '%s for a start-up configuration failure is allowed',
    (k) => {
      expect(check(`throw new AgentError('${k}', 'bad block');`)).toEqual([]);
    },
  );

  it.each(['turn_failed', 'port_exit', 'credential_unverified', 'response_error', 'usage_limit'])(
    'an adapter constructing a %s error itself is flagged',
    (k) => {
      expect(check(`return { error: new AgentError('${k}', 'x') };`)).toEqual(['agent-error@1']);
    },
  );

  it('a kind that is not a literal is flagged (it cannot be shown to be a configuration failure)', () => {
    expect(check('const e = new AgentError(kind, msg);')).toEqual(['agent-error@1']);
  });

  it('a namespaced AgentError is caught too', () => {
    expect(check("throw new domain.AgentError('turn_failed', 'x');")).toEqual(['agent-error@1']);
  });
});

describe('token arithmetic', () => {
  it('summing token fields by hand is flagged, in either spelling and with either operator', () => {
    const text = [
      'const t = u.inputTokens + u.outputTokens;',
      'total += line.usage.input_tokens;',
      "const d = a['output_tokens'] - b.cacheReadTokens;",
      'acc.totalTokens -= 1;',
    ].join('\n');
    expect(check(text)).toEqual([
      'token-arithmetic@1',
      'token-arithmetic@2',
      'token-arithmetic@3',
      'token-arithmetic@4',
    ]);
  });

  it('looks through parentheses, ?? 0, || 0, non-null, as, Number() and ++', () => {
    const text = [
      'const t = (u.input_tokens ?? 0) + (u.output_tokens || 0);',
      'const v = Number(u.cacheWriteTokens!) + 1;',
      'const w = 1 + (u.inputTokens as number);',
      'u.outputTokens++;',
    ].join('\n');
    expect(check(text)).toEqual([
      'token-arithmetic@1',
      'token-arithmetic@2',
      'token-arithmetic@3',
      'token-arithmetic@4',
    ]);
  });

  it('arithmetic on other fields and mere reads of token fields are not flagged', () => {
    const text = [
      'seq += 1;',
      'const n = usage.input + usage.output;',
      'const copy = { inputTokens: u.inputTokens };',
      'const msg = `in ${u.inputTokens}`;',
      'if (u.totalTokens > 0) seq++;',
    ].join('\n');
    expect(check(text)).toEqual([]);
  });
});

describe('spend flags', () => {
  it.each(['spendUnaccounted', 'spendCoverable', 'coversSession', 'usageProvenance'])(
    '%s in an object literal or as an assignment target is flagged',
    (flag) => {
      const text = [`const r = { ${flag}: true };`, `result.${flag} = false;`, `const s = { ${flag} };`].join(
        '\n',
      );
      expect(check(text)).toEqual(['spend-flag@1', 'spend-flag@2', 'spend-flag@3']);
    },
  );

  it('reading a flag, destructuring it and declaring it in a type are not flagged', () => {
    const text = [
      'if (outcome.result.spendUnaccounted) log();',
      'const { coversSession } = outcome.result;',
      '({ usageProvenance: p } = outcome.result);',
      'interface R { spendCoverable: boolean }',
    ].join('\n');
    expect(check(text)).toEqual([]);
  });
});

describe('which files are checked', () => {
  it('kind folders are adapter sources; core, usage and the registry files are not', () => {
    expect(isAdapterSource('src/agent/mock/adapter.ts')).toBe(true);
    expect(isAdapterSource('src/agent/claude-code/parse/line.ts')).toBe(true);
    expect(isAdapterSource('src/agent/core/disposition.ts')).toBe(false);
    expect(isAdapterSource('src/agent/usage/ledger.ts')).toBe(false);
    expect(isAdapterSource('src/agent/registry.ts')).toBe(false);
    expect(isAdapterSource('src/agent/kinds.ts')).toBe(false);
    expect(isAdapterSource('src/tracker/file/adapter.ts')).toBe(false);
  });

  it('a violation in core is not an adapter violation (the shared rule is where outcomes are built)', () => {
    const text = "ctx.emit({ type: 'turn_failed' }); new AgentError('port_exit', 'x');";
    expect(checkAdapterSources([{ path: 'src/agent/core/x.ts', text }])).toEqual([]);
    expect(checkAdapterSources([{ path: 'src/agent/acme/x.ts', text }])).toHaveLength(2);
  });

  it('violations name the file and line', () => {
    const [v] = checkAdapterSource({ path: FILE, text: "\n\nconst e = { type: 'turn_failed' };" });
    expect(v && formatSourceViolation(v)).toMatch(
      /^src\/agent\/acme\/adapter\.ts:3 \[outcome-event\] builds/,
    );
  });
});

describe('the real source tree', () => {
  const files = readAdapterSources(ROOT);

  it('is actually read: the mock and echo adapters are there, core is not (an empty walk would pass vacuously)', () => {
    const paths = files.map((f) => f.path);
    expect(paths).toContain('src/agent/mock/adapter.ts');
    expect(paths).toContain('src/agent/mock/stream-session.ts');
    expect(paths).toContain('src/agent/echo/adapter.ts');
    expect(paths.some((p) => p.startsWith('src/agent/core/') || p.startsWith('src/agent/usage/'))).toBe(
      false,
    );
  });

  it('the clean mock and echo sources pass', () => {
    const builtin = files.filter((f) => /^src\/agent\/(mock|echo)\//.test(f.path));
    expect(builtin.length).toBeGreaterThanOrEqual(10);
    expect(checkAdapterSources(builtin).map(formatSourceViolation)).toEqual([]);
  });

  it('no adapter builds outcome events, turn errors, sums token fields or sets spend flags', () => {
    expect(checkAdapterSources(files).map(formatSourceViolation)).toEqual([]);
  });
});

import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, maskLine } from '../../src/observability/logger.js';

function capture(): { stream: Writable & { isTTY?: boolean }; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      cb();
    },
  });
  return { stream, lines };
}

describe('logs', () => {
  it('mask a secret value in any field and in the message, not only known names', () => {
    const { stream, lines } = capture();
    const log = createLogger({
      level: 'debug',
      format: 'json',
      secrets: ['ghp_s3cr3tT0ken'],
      destination: stream,
    });
    log.info(
      {
        issue_id: '1',
        output: 'curl -H "Authorization: token ghp_s3cr3tT0ken"',
        nested: { deep: ['ghp_s3cr3tT0ken'] },
      },
      'hook said ghp_s3cr3tT0ken',
    );
    log.flush();
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('ghp_s3cr3tT0ken');
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      issue_id: '1',
      msg: 'hook said ***',
      nested: { deep: ['***'] },
    });
  });

  it('masks the JSON-escaped spelling of a secret too', () => {
    expect(maskLine(JSON.stringify({ a: 'p"w\\d' }), new Set(['p"w\\d']))).toBe('{"a":"***"}');
  });

  it('a secret added later is masked from then on', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', format: 'json', destination: stream });
    log.info({ token: 'late-secret-value' }, 'before');
    log.addSecret('late-secret-value');
    log.info({ token: 'late-secret-value' }, 'after');
    log.flush();
    expect(lines[0]).toContain('late-secret-value');
    expect(lines[1]).not.toContain('late-secret-value');
  });

  it('a secret removed is written as is again (a session token after its session)', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', format: 'json', destination: stream });
    log.addSecret('short-lived-token');
    log.info({ token: 'short-lived-token' }, 'live');
    log.removeSecret('short-lived-token');
    log.info({ token: 'short-lived-token' }, 'dead');
    log.flush();
    expect(lines[0]).not.toContain('short-lived-token');
    expect(lines[1]).toContain('short-lived-token');
  });

  it('drops lines below the level', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'warn', format: 'json', destination: stream });
    log.info({}, 'quiet');
    log.warn({}, 'loud');
    log.flush();
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['loud']);
  });

  it('pretty format writes readable lines with the secret still masked', () => {
    const { stream, lines } = capture();
    const log = createLogger({
      level: 'info',
      format: 'pretty',
      secrets: ['abcd-secret'],
      destination: stream,
    });
    log.info({ issue_identifier: 'DEMO-1', t: 'abcd-secret' }, 'dispatching');
    log.flush();
    const text = lines.join('\n');
    expect(text).toContain('dispatching');
    expect(text).toContain('DEMO-1');
    expect(text).not.toContain('abcd-secret');
    expect(() => JSON.parse(lines[0] as string)).toThrow();
  });

  it('pretty format writes one line per event, however many fields and even with a newline in a value', () => {
    const { stream, lines } = capture();
    const log = createLogger({ level: 'info', format: 'pretty', destination: stream });
    log.info({ issue_id: '1', issue_identifier: 'DEMO-1', attempt: 1, host: 'local' }, 'dispatching');
    log.warn(
      { issue_identifier: 'DEMO-2', error: 'first line\nsecond line', cost: null, by_model: { a: 1 } },
      'turn ended',
    );
    log.info({}, 'two\nlines');
    log.flush();
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: DEMO-1 dispatching attempt=1 host=local$/);
    expect(lines[1]).toContain(
      'WARN: DEMO-2 turn ended error="first line\\nsecond line" cost=null by_model={"a":1}',
    );
    expect(lines[2]).toContain('INFO: two\\nlines');
  });
});

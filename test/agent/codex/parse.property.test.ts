/**
 * Codex's decoders under arbitrary input: whatever a build writes, an exec line
 * and an app-server notification become a value (a reason at worst), never an
 * exception, and the error classification always yields a failure kind.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failureTerminal, readErrorInfo } from '../../../src/agent/codex/errors.js';
import { decodeExecLine } from '../../../src/agent/codex/parse.js';
import { decodeNotification } from '../../../src/agent/codex/protocol.js';

const EXEC_TYPES = [
  'thread.started',
  'turn.started',
  'item.started',
  'item.completed',
  'turn.completed',
  'turn.failed',
  'error',
];
const METHODS = [
  'turn/started',
  'turn/completed',
  'turn/failed',
  'account/rateLimits/updated',
  'item/started',
  'item/completed',
  'thread/tokenUsage/updated',
  'error',
  'item/agentMessage/delta',
  'warning',
];

describe('codex decoders', () => {
  it('an exec line, JSON or not, known type or not, decodes to a value', () => {
    const shaped = fc.record({
      type: fc.constantFrom(...EXEC_TYPES),
      thread_id: fc.anything(),
      item: fc.anything(),
      usage: fc.anything(),
      error: fc.anything(),
      msg: fc.option(fc.anything()),
    });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          shaped.map((v) => JSON.stringify(v)),
        ),
        (line) => {
          expect(typeof decodeExecLine(line).ok).toBe('boolean');
        },
      ),
    );
  });

  it('an app-server notification with any params decodes to an event', () => {
    fc.assert(
      fc.property(fc.constantFrom(...METHODS), fc.anything(), (method, params) => {
        expect(typeof decodeNotification(method, params).type).toBe('string');
      }),
    );
  });

  it('any error info and message classify as a failure with a kind', () => {
    fc.assert(
      fc.property(fc.anything(), fc.string(), (info, message) => {
        const terminal = failureTerminal(message, readErrorInfo(info), 0);
        expect(terminal.type).toBe('failure');
      }),
    );
  });
});

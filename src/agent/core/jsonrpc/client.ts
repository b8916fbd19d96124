/**
 * The client side of a JSON-RPC conversation with a long-lived agent runtime.
 * It owns our request ids and the promises waiting on them; it does no I/O of its
 * own (lines go out through `write`, decoded messages come in through `receive`),
 * so the process that carries it and the tests that drive it are free to differ.
 * The traps it exists for: a response that never comes (every request has a
 * deadline), a runtime that dies with requests outstanding (closing rejects them
 * all at once), and a request from the runtime that nobody answers (`receive`
 * hands it back to the caller, who must answer it through `respond`).
 */
import { encodeRpc, type RpcErrorObject, type RpcId, type RpcMessage } from './messages.js';

/** The runtime answered a request with an error object. */
export class RpcResponseError extends Error {
  override readonly name = 'RpcResponseError';
  constructor(
    readonly method: string,
    readonly error: RpcErrorObject,
  ) {
    super(`${method} failed: ${error.message} (code ${error.code})`);
  }
}

/** No response arrived within the request's deadline. */
export class RpcTimeoutError extends Error {
  override readonly name = 'RpcTimeoutError';
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`no response to ${method} within ${timeoutMs} ms`);
  }
}

/** The conversation ended (the runtime exited or closed its output) before the response. */
export class RpcClosedError extends Error {
  override readonly name = 'RpcClosedError';
  constructor(
    readonly method: string,
    readonly reason: string,
  ) {
    super(`${method} got no response: ${reason}`);
  }
}

/** What `receive` leaves to the caller. */
export type Inbound =
  /** A response to one of our requests (or a stray one): already settled. */
  | { type: 'handled' }
  | { type: 'notification'; method: string; params: unknown }
  /** A request from the runtime: answer it with `respond` or `respondError`. */
  | { type: 'request'; id: RpcId; method: string; params: unknown };

export interface RequestOptions {
  /** Deadline for the response; 0 or absent waits until the conversation closes. */
  timeoutMs?: number;
}

interface Pending {
  method: string;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | null;
}

export class JsonRpcClient {
  #nextId = 1;
  readonly #pending = new Map<RpcId, Pending>();
  #closed: string | null = null;

  /**
   * `write` sends one line (no newline) and returns false when it cannot be sent.
   * `version` adds `"jsonrpc":"2.0"` to every message we send.
   */
  constructor(
    private readonly write: (line: string) => boolean,
    private readonly options: { version?: boolean } = {},
  ) {}

  /** Requests still waiting for their response. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** True once `close` ran. */
  get closed(): boolean {
    return this.#closed !== null;
  }

  /** Sends a request; resolves with its result, rejects with one of the three errors above. */
  request(method: string, params: unknown, options: RequestOptions = {}): Promise<unknown> {
    if (this.#closed !== null) return Promise.reject(new RpcClosedError(method, this.#closed));
    const id = this.#nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? 0;
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.#pending.delete(id);
              reject(new RpcTimeoutError(method, timeoutMs));
            }, timeoutMs)
          : null;
      timer?.unref?.();
      this.#pending.set(id, { method, resolve, reject, timer });
      if (!this.write(encodeRpc({ id, method, params }, this.options.version === true))) {
        this.#settle(id)?.reject(new RpcClosedError(method, 'the request could not be written'));
      }
    });
  }

  /** Sends a notification (no response expected); false when it could not be written. */
  notify(method: string, params?: unknown): boolean {
    if (this.#closed !== null) return false;
    const message = params === undefined ? { method } : { method, params };
    return this.write(encodeRpc(message, this.options.version === true));
  }

  /** Answers a request of the runtime. */
  respond(id: RpcId, result: unknown): boolean {
    if (this.#closed !== null) return false;
    return this.write(encodeRpc({ id, result }, this.options.version === true));
  }

  /** Answers a request of the runtime with an error. */
  respondError(id: RpcId, error: RpcErrorObject): boolean {
    if (this.#closed !== null) return false;
    return this.write(encodeRpc({ id, error }, this.options.version === true));
  }

  /** Takes one decoded message: settles our pending request, or hands the message back. */
  receive(message: RpcMessage): Inbound {
    switch (message.type) {
      case 'response':
        this.#settle(message.id)?.resolve(message.result);
        return { type: 'handled' };
      case 'error_response': {
        if (message.id !== null) {
          const pending = this.#settle(message.id);
          pending?.reject(new RpcResponseError(pending.method, message.error));
        }
        return { type: 'handled' };
      }
      case 'notification':
        return { type: 'notification', method: message.method, params: message.params };
      case 'request':
        return { type: 'request', id: message.id, method: message.method, params: message.params };
    }
  }

  /** Ends the conversation: every pending request rejects with `RpcClosedError`. Idempotent. */
  close(reason: string): void {
    if (this.#closed !== null) return;
    this.#closed = reason;
    for (const [id, pending] of [...this.#pending]) {
      this.#settle(id);
      pending.reject(new RpcClosedError(pending.method, reason));
    }
  }

  #settle(id: RpcId): Pending | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    this.#pending.delete(id);
    if (pending.timer !== null) clearTimeout(pending.timer);
    return pending;
  }
}

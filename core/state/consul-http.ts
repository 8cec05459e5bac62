/**
 * A small client for Consul's HTTP API, shared by the Consul KV store and
 * the Consul registry: undici with keep-alive, the ACL token in
 * `X-Consul-Token`, `X-Consul-Index` parsed, and timeouts that leave room
 * for blocking queries (Consul holds them for `wait` plus up to wait/16).
 */
import { Agent, request, type Dispatcher } from 'undici';

export interface ConsulHttpOptions {
  /** Base URL of the agent, e.g. `http://127.0.0.1:8500`. */
  readonly address: string;
  /** ACL token sent as `X-Consul-Token`. */
  readonly token?: string;
  /** Timeout of a non-blocking call (default 10 s). */
  readonly timeoutMs?: number;
}

export interface ConsulResponse {
  readonly status: number;
  /** `X-Consul-Index`, or null when absent or not a positive integer. */
  readonly index: number | null;
  readonly body: Buffer;
}

export interface ConsulCall {
  readonly method?: 'GET' | 'PUT' | 'DELETE';
  /** The path after the address, already percent-encoded (`/v1/kv/svc/a`). */
  readonly path: string;
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: Buffer | string;
  readonly signal?: AbortSignal;
  /** A blocking query's wait in ms: sent as `wait=<ms>ms`, and the timeouts grow by it. */
  readonly waitMs?: number;
}

/** Consul answered with a status other than 2xx (or 404 where the caller allows it). */
export class ConsulHttpError extends Error {
  constructor(readonly status: number, readonly body: string, readonly call: string) {
    super(`Consul answered ${call} with ${status}${body === '' ? '' : `: ${body.trim().slice(0, 200)}`}`);
    this.name = 'ConsulHttpError';
  }
}

export class ConsulHttp {
  readonly #address: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;

  constructor(options: ConsulHttpOptions) {
    this.#address = options.address.replace(/\/+$/, '');
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  }

  get address(): string {
    return this.#address;
  }

  /** Sends one call; resolves with any status (callers decide what a 404 means). Rejects on network errors and with `signal.reason` on abort. */
  async send(call: ConsulCall): Promise<ConsulResponse> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value === undefined || value === false) continue;
      search.append(name, value === true ? '' : String(value));
    }
    if (call.waitMs !== undefined) search.set('wait', `${Math.max(1, Math.round(call.waitMs))}ms`);
    // Consul takes flags like ?recurse without a value; URLSearchParams writes `recurse=`, which Go reads the same.
    const query = search.toString();
    const url = `${this.#address}${call.path}${query === '' ? '' : `?${query}`}`;
    const headers: Record<string, string> = {};
    if (this.#token !== undefined && this.#token !== '') headers['x-consul-token'] = this.#token;
    if (call.body !== undefined) headers['content-type'] = 'application/octet-stream';
    const timeout = this.#timeoutMs + (call.waitMs === undefined ? 0 : call.waitMs + call.waitMs / 16);
    try {
      const response = await request(url, {
        method: call.method ?? 'GET', headers, body: call.body, signal: call.signal, dispatcher: this.#dispatcher,
        headersTimeout: timeout, bodyTimeout: timeout,
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      const raw = response.headers['x-consul-index'];
      const index = typeof raw === 'string' && /^\d+$/.test(raw) && Number(raw) > 0 ? Number(raw) : null;
      return { status: response.statusCode, index, body };
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason;
      throw error;
    }
  }

  /** Like `send`, but a status outside 2xx (and outside `allow`) throws `ConsulHttpError`. */
  async expect(call: ConsulCall, allow: readonly number[] = []): Promise<ConsulResponse> {
    const response = await this.send(call);
    if ((response.status < 200 || response.status > 299) && !allow.includes(response.status)) {
      throw new ConsulHttpError(response.status, response.body.toString('utf8'), `${call.method ?? 'GET'} ${call.path}`);
    }
    return response;
  }

  async close(): Promise<void> {
    await this.#dispatcher.destroy();
  }
}

/** A delay that an abort signal cuts short (rejecting with its reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Exponential back-off with full jitter's upper bound kept: base × 2^(attempt-1), capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

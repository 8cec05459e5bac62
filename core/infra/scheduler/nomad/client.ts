/**
 * A small typed client of Nomad's HTTP API (hashicorp/nomad `command/agent/http.go`):
 * the ACL token in `X-Nomad-Token`, `namespace` and `region` on every request,
 * blocking queries (`index`, `wait`; the answer's `X-Nomad-Index`), and Nomad's
 * plain-text errors turned into SvcErrors that keep the server's text:
 *
 * | Nomad answers                              | code                    |
 * |--------------------------------------------|-------------------------|
 * | no answer (refused, unknown host, timeout) | `scheduler_unreachable` |
 * | 403 `Permission denied` (no/unknown token) | `forbidden`             |
 * | 404 (`job not found`, `alloc not found`)   | `not_found`             |
 * | 500 `Enforcing job modify index …`         | `conflict`              |
 * | any other 4xx/5xx                          | `nomad_rejected`        |
 *
 * `details` carries `{ status, method, path, text }` of the failed request.
 */
import { agentOperation, timed, type CallObserver } from '../../metrics/platform-metrics.js';
import { SvcError, type ErrorCode } from '../../../model/errors.js';
import WebSocket from 'ws';

export interface NomadClientOptions {
  /** Base URL of a Nomad agent, e.g. `http://127.0.0.1:4646`. */
  readonly url: string;
  /** ACL token (secret ID) sent as `X-Nomad-Token`. */
  readonly token?: string | undefined;
  readonly namespace?: string | undefined;
  readonly region?: string | undefined;
  /** Bound on one request that is not a blocking query (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Told how long each non-blocking request took (`/metrics`). */
  readonly observe?: CallObserver | undefined;
}

export interface BlockingOptions {
  /** The `X-Nomad-Index` of a previous answer: Nomad answers once its index passes it, or after `waitMs`. */
  readonly index?: number;
  readonly waitMs?: number;
  readonly signal?: AbortSignal;
}

export interface NomadAnswer<T> {
  readonly body: T;
  /** `X-Nomad-Index`, 0 when the answer has none. */
  readonly index: number;
}

export type Query = Record<string, string | number | boolean | undefined>;

/** The message prefix of the three EnforceIndex failures (`nomad/job_endpoint.go`). */
export const ENFORCE_INDEX_PREFIX = 'Enforcing job modify index';

export class NomadClient {
  readonly url: string;
  readonly namespace: string | undefined;
  readonly region: string | undefined;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #observe: CallObserver | undefined;

  constructor(options: NomadClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.#token = options.token || undefined;
    this.namespace = options.namespace || undefined;
    this.region = options.region || undefined;
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#observe = options.observe;
  }

  get<T>(path: string, query: Query = {}, blocking: BlockingOptions = {}): Promise<NomadAnswer<T>> {
    const q: Query = { ...query };
    if (blocking.index !== undefined && blocking.index > 0) {
      q.index = blocking.index;
      q.wait = `${Math.max(1, Math.round(blocking.waitMs ?? 60_000))}ms`;
    }
    // A blocking query may take `wait` plus Nomad's jitter (wait/16): give it room before timing out.
    const timeoutMs = q.index !== undefined ? (blocking.waitMs ?? 60_000) * 1.25 + this.#timeoutMs : this.#timeoutMs;
    return this.#request<T>('GET', path, q, undefined, timeoutMs, blocking.signal);
  }

  put<T>(path: string, body: unknown, query: Query = {}): Promise<NomadAnswer<T>> {
    return this.#request<T>('PUT', path, query, body, this.#timeoutMs);
  }

  post<T>(path: string, body: unknown, query: Query = {}): Promise<NomadAnswer<T>> {
    return this.#request<T>('POST', path, query, body, this.#timeoutMs);
  }

  delete<T>(path: string, query: Query = {}): Promise<NomadAnswer<T>> {
    return this.#request<T>('DELETE', path, query, undefined, this.#timeoutMs);
  }

  /** A WebSocket to `path` (`/v1/client/allocation/:id/exec`), with the token, namespace and region as every request has them. */
  socket(path: string, query: Query = {}): WebSocket {
    const headers: Record<string, string> = this.#token === undefined ? {} : { 'X-Nomad-Token': this.#token };
    return new WebSocket(this.#address(path, query).replace(/^http/, 'ws'), { headers, perMessageDeflate: false });
  }

  /** A GET whose answer is plain text (`/v1/client/fs/logs/…?plain=true`). */
  async text(path: string, query: Query = {}): Promise<string> {
    return (await this.#request<string>('GET', path, query, undefined, this.#timeoutMs, undefined, true)).body;
  }

  #address(path: string, query: Query): string {
    const params = new URLSearchParams();
    if (this.namespace !== undefined) params.set('namespace', this.namespace);
    if (this.region !== undefined) params.set('region', this.region);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
    const search = params.toString();
    return `${this.url}${path}${search ? `?${search}` : ''}`;
  }

  #request<T>(
    method: string,
    path: string,
    query: Query,
    body: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
    plain = false,
  ): Promise<NomadAnswer<T>> {
    const observe = this.#observe;
    // A blocking query waits on purpose: its time says nothing of Nomad's.
    if (observe === undefined || query.index !== undefined) return this.#send<T>(method, path, query, body, timeoutMs, signal, plain);
    const operation = agentOperation(method, path);
    return timed(
      () => this.#send<T>(method, path, query, body, timeoutMs, signal, plain),
      (seconds, ok) => observe(operation, seconds, ok),
    );
  }

  async #send<T>(
    method: string,
    path: string,
    query: Query,
    body: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
    plain = false,
  ): Promise<NomadAnswer<T>> {
    const headers: Record<string, string> = {};
    if (this.#token !== undefined) headers['X-Nomad-Token'] = this.#token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const timeout = AbortSignal.timeout(timeoutMs);
    const signals = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      ({ response, text } = await fetchOnce(this.#address(path, query), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signals,
      }));
    } catch (error) {
      if (signal?.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = timeout.aborted ? `no answer within ${timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).message);
      throw new SvcError('scheduler_unreachable', `cannot reach Nomad at ${this.url} (${method} ${path}): ${why}`, {
        hint: 'Check the Nomad address svc is given (the driver url) and that the agent is running and reachable from svc.',
        details: { method, path, url: this.url },
        cause: error,
      });
    }
    const index = Number(response.headers.get('x-nomad-index') ?? 0) || 0;
    if (!response.ok) throw nomadError(response.status, method, path, text);
    if (plain) return { body: text as T, index };
    try {
      return { body: (text === '' ? null : JSON.parse(text)) as T, index };
    } catch (error) {
      throw new SvcError('nomad_rejected', `Nomad answered ${method} ${path} with something that is not JSON: ${text.slice(0, 200)}`, {
        details: { status: response.status, method, path, text: text.slice(0, 2000) },
        cause: error,
      });
    }
  }
}

/** Errors of a kept-alive connection the agent closed as the request went out: nothing reached Nomad. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * One request and its whole answer. A GET that meets a kept-alive connection the agent has
 * just closed (its idle time-out racing the request) is sent once more, on a new connection:
 * a read asks nothing of Nomad twice. Other methods are never sent twice.
 */
async function fetchOnce(url: string, init: RequestInit): Promise<{ response: Response; text: string }> {
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await fetch(url, init);
      return { response, text: await response.text() };
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (attempt > 0 || init.method !== 'GET' || init.signal?.aborted || code === undefined || !STALE_CONNECTION.has(code)) throw error;
    }
  }
}

/** An SvcError for a Nomad error answer, keeping Nomad's own text (it is text/plain). */
export function nomadError(status: number, method: string, path: string, text: string): SvcError {
  const message = text.trim() || `HTTP ${status}`;
  let code: ErrorCode = 'nomad_rejected';
  let hint: string | undefined;
  if (status === 403) {
    code = 'forbidden';
    hint = 'Give svc a Nomad ACL token whose policy allows this in the namespace; see docs/operators.md.';
  } else if (status === 404) code = 'not_found';
  else if (message.startsWith(ENFORCE_INDEX_PREFIX)) code = 'conflict';
  return new SvcError(code, `Nomad answered ${status} to ${method} ${path}: ${message}`, {
    ...(hint === undefined ? {} : { hint }),
    details: { status, method, path, text: message },
  });
}

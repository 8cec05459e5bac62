/**
 * A small typed client of the control-plane API (docs/api.md) for the CLI:
 * a base URL and a bearer token, JSON in and out. svc's error bodies
 * (`{"error": {code, message, hint}}`) become an SvcError with the same code,
 * message and hint; a server that cannot be reached is `server_unreachable`
 * naming the URL; anything that is not svc's answer is `unexpected_response`.
 * `events()` reads a Server-Sent Events answer (the logs of a deployment).
 *
 * Requests go through node-fetch (Node's http module under fetch's API), not Node's own fetch: that one
 * loads undici and compiles its HTTP parser to WebAssembly, and the process then waits for the compiler
 * at exit: a command talking to the server took 0.12 s instead of 0.07 s. The head of an answer is
 * awaited at most `headTimeoutMs` (300 s), except for the `long` requests: a deploy (or a resume) answers once
 * images are built and containers healthy, which can take longer.
 */
import fetch, { type RequestInit, Response } from 'node-fetch';
import { errorCodes, SvcError, type ErrorCode } from '../core/model/errors.js';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

export const API_PREFIX = '/api/v1';

export interface ApiClientOptions {
  /** Base URL of the server, without a trailing slash. */
  readonly server: string;
  readonly token?: string;
  /** Where the server URL came from (`SVC_SERVER`, a file): errors say it. */
  readonly serverSource?: string;
  /** Where the token came from: a 401 says it. */
  readonly tokenSource?: string;
  /** How long requests answered 503 `not_leader` are sent again (default 30 s); 0 never. */
  readonly leaderWaitMs?: number;
  /** How long a request that is not `long` waits for the head of its answer (default 300 s). */
  readonly headTimeoutMs?: number;
}

/**
 * How long the CLI rides through a change of leader among svc replicas (a
 * rolling update of the svc job, a replica lost): the lock's session TTL is
 * 15 s, and Consul may take twice that to invalidate a dead leader's session.
 */
const LEADER_WAIT_MS = 30_000;

export interface RequestOptions {
  /** Sent as JSON. */
  readonly json?: unknown;
  /** Sent as is (an upload). */
  readonly body?: Uint8Array;
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
  /** The answer may take minutes (a deploy, a resume, an upload): no timeout. */
  readonly long?: boolean;
}

/** One Server-Sent Event: its `event` field (`message` when absent) and its `data`. */
export interface ServerEvent {
  readonly event: string;
  readonly data: string;
}

/** How long a request that is not `long` waits for the head of its answer (what Node's fetch waited). */
const HEAD_TIMEOUT_MS = 300_000;

/** Node's codes for a server certificate it does not trust (self-signed, unknown authority, wrong name, expired). */
const UNTRUSTED_CERTIFICATE =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_HAS_EXPIRED|ERR_TLS_CERT_ALTNAME_INVALID)$/;

export class ApiClient {
  readonly server: string;
  readonly #token: string | undefined;
  readonly #serverSource: string | undefined;
  readonly #tokenSource: string | undefined;
  readonly #leaderWaitMs: number;
  readonly #headTimeoutMs: number;

  constructor(options: ApiClientOptions) {
    this.server = options.server.replace(/\/+$/, '');
    this.#token = options.token;
    this.#serverSource = options.serverSource;
    this.#tokenSource = options.tokenSource;
    this.#leaderWaitMs = options.leaderWaitMs ?? LEADER_WAIT_MS;
    this.#headTimeoutMs = options.headTimeoutMs ?? HEAD_TIMEOUT_MS;
  }

  get<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.json<T>('GET', path, options);
  }

  post<T>(path: string, json?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.json<T>('POST', path, json === undefined ? options : { ...options, json });
  }

  /** A DELETE answered 204. */
  async delete(path: string, options: RequestOptions = {}): Promise<void> {
    const response = await this.send('DELETE', path, options);
    dropBody(response);
  }

  /**
   * True on 2xx, false on 404. Any other answer to the HEAD has no body to say why: the
   * same path is asked with GET, whose answer carries svc's error (and rides out a change of leader).
   */
  async exists(path: string, options: RequestOptions = {}): Promise<boolean> {
    const response = await this.request('HEAD', path, options);
    if (response.status === 404) return false;
    if (response.ok) return true;
    const explained = await this.request('GET', path, options);
    if (explained.ok || explained.status === 404) {
      dropBody(explained);
      throw await this.errorOf(response, 'HEAD', path);
    }
    throw await this.errorOf(explained, 'GET', path);
  }

  /** The request's JSON answer; an error answer thrown as SvcError. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    const text = await response.text();
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw this.unexpected(response.status, method, path, text);
    }
  }

  /** Sends the request; any status but 2xx becomes the SvcError the server meant. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const response = await this.request(method, path, options);
    if (response.ok) return response;
    throw await this.errorOf(response, method, path);
  }

  /**
   * Sends the request and answers whatever the server answered (only network
   * failures throw). An answer 503 `not_leader` (svc replicas are changing
   * leader: nothing was done) is sent again after its Retry-After, for up to
   * `leaderWaitMs`; then that answer is returned.
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const deadline = Date.now() + this.#leaderWaitMs;
    for (;;) {
      const response = await this.#requestOnce(method, path, options);
      if (response.status !== 503 || method === 'HEAD' || !response.headers.get('content-type')?.includes('json')) return response;
      const text = await response.text().catch(() => '');
      const waitMs = Math.min(5, Math.max(1, Number(response.headers.get('retry-after')) || 1)) * 1000;
      const again =
        this.errorFrom(503, text, method, path).code === 'not_leader' && Date.now() + waitMs <= deadline && !options.signal?.aborted;
      const answer = () => new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
      if (!again) return answer();
      // Ctrl-C (the signal) ends the wait at once, with the answer the server gave.
      if (!(await sleepUnlessAborted(waitMs, options.signal))) return answer();
    }
  }

  async #requestOnce(method: string, path: string, options: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    if (this.#token !== undefined) headers.Authorization = `Bearer ${this.#token}`;
    let body: string | Buffer | undefined =
      options.body === undefined ? undefined : Buffer.from(options.body.buffer, options.body.byteOffset, options.body.byteLength);
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['Content-Type'] = 'application/json';
    }
    // The head's bound aborts only a request still waiting for it: the timer is cleared once the head came.
    const waited = options.long ? null : new AbortController();
    const timer = waited === null ? null : setTimeout(() => waited.abort(), this.#headTimeoutMs).unref();
    const signals = [options.signal, waited?.signal].filter((signal) => signal !== undefined);
    const init: RequestInit = { method, headers, body, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0] };
    try {
      return await fetch(`${this.server}${path}`, init);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (waited?.signal.aborted) throw this.unreachable(new Error(`no answer within ${this.#headTimeoutMs / 1000} s`));
      throw this.unreachable(error);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }

  /**
   * Opens `path` as a Server-Sent Events stream and yields each event until
   * the stream ends or `signal` aborts (then it returns quietly). Comments
   * (`: ping`) are skipped.
   */
  async *events(path: string, signal?: AbortSignal): AsyncGenerator<ServerEvent> {
    let response: Response;
    try {
      response = await this.send('GET', path, { headers: { Accept: 'text/event-stream' }, signal });
    } catch (error) {
      if (signal?.aborted) return;
      throw error;
    }
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('text/event-stream')) throw this.unexpected(response.status, 'GET', path, await response.text());
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true }).replace(/\r\n?/g, '\n');
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = parseEvent(block);
          if (event !== null) yield event;
        }
      }
    } catch (error) {
      if (signal?.aborted) return;
      throw new SvcError(
        'server_unreachable',
        `lost the connection to the svc server at ${this.server} while reading ${path}: ${(error as Error).message}.`,
        {
          hint: 'Run the command again once the server is back.',
          cause: error,
        },
      );
    }
  }

  /** The SvcError an error answer stands for. */
  async errorOf(response: Response, method: string, path: string): Promise<SvcError> {
    const text = method === 'HEAD' ? '' : await response.text().catch(() => '');
    return this.errorFrom(response.status, text, method, path);
  }

  /** The SvcError an error answer (its status and body text) stands for. */
  errorFrom(status: number, text: string, method: string, path: string): SvcError {
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const error = (parsed as { error?: unknown } | undefined)?.error;
    if (
      typeof error === 'object' &&
      error !== null &&
      typeof (error as { code?: unknown }).code === 'string' &&
      typeof (error as { message?: unknown }).message === 'string'
    ) {
      const { code, message, hint, details } = error as { code: string; message: string; hint?: unknown; details?: unknown };
      const known = code in errorCodes;
      const serverHint = typeof hint === 'string' ? hint : undefined;
      return new SvcError(known ? (code as ErrorCode) : 'internal', known ? message : `${message} (${code})`, {
        hint: this.hintFor(code, serverHint),
        details,
        status,
      });
    }
    // HEAD has no body: say what its status means.
    if (method === 'HEAD' && (status === 401 || status === 403)) {
      return new SvcError(status === 401 ? 'unauthorized' : 'forbidden', `${this.server} refused the token (${status}).`, {
        hint: this.hintFor('unauthorized', undefined),
      });
    }
    return this.unexpected(status, method, path, text);
  }

  private hintFor(code: string, serverHint: string | undefined): string | undefined {
    if (code !== 'unauthorized' || this.#tokenSource === undefined) return serverHint;
    return `The token from ${this.#tokenSource} was refused (revoked, expired, or of another server): run \`svc login\`, or set SVC_TOKEN to a valid token.`;
  }

  private unexpected(status: number, method: string, path: string, text: string): SvcError {
    const start = text.replace(/\s+/g, ' ').trim().slice(0, 200);
    return new SvcError(
      'unexpected_response',
      `${method} ${this.server}${path} answered ${status} with something that is not svc's API${start === '' ? '' : `: ${start}`}`,
      {
        hint: `Check that ${this.server}${this.#serverSource ? ` (from ${this.#serverSource})` : ''} is the base URL of an svc server.`,
        details: { status },
      },
    );
  }

  /** The headers that sign a request in (none without a token): for transfers made outside fetch (cli/transfer/). */
  authorization(): Record<string, string> {
    return this.#token === undefined ? {} : { Authorization: `Bearer ${this.#token}` };
  }

  /** `server_unreachable` for a request that failed before any answer (node-fetch's error with its code, or one with its cause). */
  unreachable(error: unknown): SvcError {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause ?? (error as { code?: string; message?: string });
    const why =
      cause?.code === 'ECONNREFUSED'
        ? 'connection refused'
        : cause?.code === 'ENOTFOUND' || cause?.code === 'EAI_AGAIN'
          ? 'unknown host'
          : (cause?.code ?? cause?.message ?? (error as Error).message);
    const from = this.#serverSource ? ` (from ${this.#serverSource})` : '';
    if (cause?.code !== undefined && UNTRUSTED_CERTIFICATE.test(cause.code)) {
      return new SvcError(
        'server_unreachable',
        `cannot reach the svc server at ${this.server}${from}: its TLS certificate is not trusted here (${cause.code}).`,
        {
          hint: 'For a certificate of your own authority, point NODE_EXTRA_CA_CERTS at its PEM file; check that the URL names a host the certificate holds (docs/domains.md#https).',
          cause: error,
          details: { server: this.server },
        },
      );
    }
    return new SvcError('server_unreachable', `cannot reach the svc server at ${this.server}${from}: ${why}.`, {
      hint: 'Start one on this machine with `svc server`, or point SVC_SERVER at yours (or sign in to it: `svc login --server <URL>`).',
      cause: error,
      details: { server: this.server },
    });
  }
}

/** Lets go of an answer's body that will not be read: its connection is closed, not read to the end. */
export function dropBody(response: Response): void {
  (response.body as Readable | null)?.destroy();
}

/** One SSE block (RFC: lines `field: value`; several `data` lines join with newlines); null for a comment-only block. */
export function parseEvent(block: string): ServerEvent | null {
  let event = 'message';
  const data: string[] = [];
  let any = false;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else continue;
    any = true;
  }
  return any ? { event, data: data.join('\n') } : null;
}

/** Waits `ms`; false when `signal` aborted the wait first. */
async function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(ms, undefined, signal === undefined ? {} : { signal });
    return true;
  } catch (error) {
    if (signal?.aborted) return false;
    throw error;
  }
}

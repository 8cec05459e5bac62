/**
 * HTTP plumbing of the Consul stand-in, after agent/http.go: text/plain
 * error bodies, JSON answers with `Content-Type: application/json`, query
 * metadata headers and blocking queries (`?index=&wait=`: default wait 5
 * minutes, at most 10, plus up to wait/16 of jitter; `X-Consul-Index` is
 * never 0).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseGoDuration } from './go.js';
import type { ConsulState } from './state.js';

export const DEFAULT_WAIT_MS = 5 * 60_000;
export const MAX_WAIT_MS = 10 * 60_000;

/** Consul's 404 text for a path it has no handler for. */
export const NOT_AN_ENDPOINT = 'Invalid URL path: not a recognized HTTP API endpoint\n';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  /** The percent-decoded path (Go's `URL.Path`). */
  readonly path: string;
  /** The path as sent. */
  readonly rawPath: string;
  readonly query: URLSearchParams;
  readonly body: Buffer;
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendJson(res: ServerResponse, value: unknown, status = 200): void {
  if (res.headersSent) return;
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** `setMeta`: the query metadata every read answers with. */
export function setMeta(res: ServerResponse, index: number): void {
  res.setHeader('X-Consul-Index', String(Math.max(index, 1)));
  res.setHeader('X-Consul-KnownLeader', 'true');
  res.setHeader('X-Consul-LastContact', '0');
  res.setHeader('X-Consul-Query-Backend', 'blocking-query');
}

export function has(query: URLSearchParams, name: string): boolean {
  return query.has(name);
}

export interface Blocking {
  readonly minIndex: number;
  readonly waitMs: number;
}

/** `parseWait`: 400 `Invalid wait time` / `Invalid index`. */
export function parseBlocking(query: URLSearchParams): Blocking {
  let waitMs = DEFAULT_WAIT_MS;
  const wait = query.get('wait');
  if (wait !== null && wait !== '') {
    try {
      waitMs = parseGoDuration(wait);
    } catch {
      throw new HttpError(400, 'Invalid wait time');
    }
  }
  let minIndex = 0;
  const index = query.get('index');
  if (index !== null && index !== '') {
    if (!/^\d+$/.test(index)) throw new HttpError(400, 'Invalid index');
    minIndex = Number(index);
  }
  if (query.has('stale') && query.has('consistent'))
    throw new HttpError(400, 'Cannot specify ?stale with ?consistent, conflicting semantics.');
  if (waitMs <= 0) waitMs = DEFAULT_WAIT_MS;
  return { minIndex, waitMs: Math.min(waitMs, MAX_WAIT_MS) };
}

/**
 * Runs `evaluate` until its index passes `minIndex` (only when the client
 * asked to block, `index > 0`), re-running it after every write, or until
 * the wait (plus jitter) ends; then answers with its last result.
 */
export function blockingQuery<T>(
  call: Call,
  state: ConsulState,
  jitter: boolean,
  evaluate: () => { index: number; result: T },
  answer: (index: number, result: T) => void,
): void {
  const { minIndex, waitMs } = parseBlocking(call.query);
  let current = evaluate();
  if (minIndex === 0 || current.index > minIndex) return answer(current.index, current.result);
  const timeoutMs = waitMs + (jitter ? Math.random() * (waitMs / 16) : 0);
  const finish = (): void => {
    clearTimeout(timer);
    unsubscribe();
    call.res.off('close', onClose);
    answer(current.index, current.result);
  };
  const onClose = (): void => {
    clearTimeout(timer);
    unsubscribe();
  };
  const unsubscribe = state.onChange(() => {
    current = evaluate();
    if (current.index > minIndex) finish();
  });
  const timer = setTimeout(() => {
    current = evaluate();
    finish();
  }, timeoutMs);
  call.res.on('close', onClose);
}

/**
 * A small HTTP client for API tests: real requests over a real socket,
 * answers parsed once, and each API answer checked against its route's
 * declared schema (answer-check.ts).
 */
import http from 'node:http';
import { checkAnswer } from './answer-check.js';

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  readonly json: any;
  readonly text: string;
}

export interface CallOptions {
  readonly token?: string;
  /** Sent as JSON with Content-Type application/json. */
  readonly json?: unknown;
  /** Sent as an application/x-www-form-urlencoded form. */
  readonly form?: Record<string, string>;
  /** Sent as is. */
  readonly body?: string | Buffer;
  readonly headers?: Record<string, string>;
  /** `manual`: a redirect is the answer (its status and Location), not followed. */
  readonly redirect?: 'follow' | 'manual';
}

export type Call = (method: string, path: string, options?: CallOptions) => Promise<Answer>;

/** `checked: false` for a server whose routes are not the API's (a test's own routes). */
export function apiClient(baseUrl: string, { checked = true } = {}): Call {
  return async (method, path, options = {}) => {
    const { headers, body } = requestParts(options);
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: options.redirect ?? 'follow' });
    const text = await response.text();
    if (checked) checkAnswer(method, path, response.status, response.headers.get('content-type'), text);
    return { status: response.status, headers: response.headers, json: parseJson(text), text };
  };
}

/** The headers and body a call sends: the bearer token, and a JSON or form body with its Content-Type. */
export function requestParts(options: CallOptions): { headers: Record<string, string>; body: string | Buffer | undefined } {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    return { headers, body: JSON.stringify(options.json) };
  }
  if (options.form !== undefined) {
    headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    return { headers, body: new URLSearchParams(options.form).toString() };
  }
  return { headers, body: options.body };
}

/** A body parsed as JSON; undefined when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Sends a chunked body (no Content-Length) of `bytes` bytes; resolves with the status the server answered. */
export function postChunked(url: string, bytes: number, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { ...headers, 'Transfer-Encoding': 'chunked' } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      // The server may close once it answered; the answer is what counts.
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      request.end();
    };
    pump();
  });
}

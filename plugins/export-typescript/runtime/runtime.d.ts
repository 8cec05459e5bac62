import type { SvcErrorCode } from './errors.js';

export type { SvcErrorCode } from './errors.js';

/** A WebSocket class like the standard one: the global WebSocket (Node 22+, browsers, Deno, Bun) or the ws package's. */
export type WebSocketClass = new (url: string, protocols?: string | string[]) => object;

/** How a client calls: every option is looked up at each call, so a changed environment needs no new client; undefined is the default. */
export interface ClientOptions {
  /** The svc server's URL; default SVC_SERVER, else the server the client was generated from. */
  readonly server?: string | undefined;
  /** The bearer token; default SVC_TOKEN. null calls without a token (public workloads). */
  readonly token?: string | null | undefined;
  /** The WebSocket class connect() uses; default globalThis.WebSocket (Node 20 has none: pass ws's). */
  readonly WebSocket?: WebSocketClass | undefined;
}

/**
 * An error answer, as svc's typed error: code is svc's stable code (docs/errors.md) for svc's
 * own answers, else the usual one of the HTTP status (an ASGI app's 404 is not_found, its body in
 * details); a newer server may send a code this client does not list yet. instanceof SvcError
 * holds for the errors of every exported client, whichever package's SvcError you import.
 */
export declare class SvcError extends Error {
  constructor(code: SvcErrorCode | (string & Record<never, never>), message: string, options?: { readonly status?: number; readonly hint?: string; readonly details?: unknown });
  readonly name: 'SvcError';
  readonly code: SvcErrorCode | (string & Record<never, never>);
  /** The HTTP status of the answer (the code's usual one for errors found here, such as server_unreachable). */
  readonly status: number;
  /** What to do about it, when svc says. */
  readonly hint: string | null;
  /** svc's structured detail, or the parsed body of an answer that is not svc's. */
  readonly details: unknown;
}

/** The WebSocket session is over: the server or this client closed it. */
export declare class ConnectionClosedError extends Error {
  readonly name: 'ConnectionClosedError';
}

/** EndpointCall#get() gave up waiting: the call has not ended yet (it goes on: get() it again later). */
export declare class CallTimeoutError extends Error {
  readonly name: 'CallTimeoutError';
  readonly callId: string;
}

/** A call's status in svc (GET /api/v1/calls/<id>). */
export type CallStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired';

/**
 * A request to an endpoint that svc answers later (sent with Prefer: respond-async): what spawn() and
 * callFromId() give. Its answer is kept by svc as the call's outcome, for a day by default.
 */
export interface EndpointCall<T> {
  /** The call's id in svc (svc call get|cancel|logs <id>, GET /api/v1/calls/<id>). */
  readonly callId: string;
  /**
   * Waits for the answer and resolves to it as request() does, or throws as request() does (SvcError of an error answer).
   * timeoutMs: CallTimeoutError when the call has not ended by then (default: wait as long as it takes).
   * A cancelled call throws SvcError call_cancelled; one whose outcome svc no longer keeps, call_expired.
   */
  get(options?: { readonly timeoutMs?: number | undefined }): Promise<T>;
  /** Cancels the call: a queued one is never sent, a running one is given up. SvcError conflict once it ended. */
  cancel(): Promise<void>;
  status(): Promise<CallStatus>;
}

/** An HTTP answer, read whole; an error answer is returned as it came, not thrown. */
export interface ClientResponse {
  readonly status: number;
  /** 2xx. */
  readonly ok: boolean;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  text(): string;
  /** The body parsed as JSON (throws SyntaxError when it is not JSON). */
  json(): unknown;
}

export type QueryValue = string | number | boolean | null | undefined;

/** One request to a route of an ASGI app. */
export interface AsgiRequestInit {
  /** A JSON body (sent with content-type application/json). */
  readonly json?: unknown;
  /** A raw body, as it is; set its content-type in headers. */
  readonly body?: string | Uint8Array | undefined;
  /** Extra headers; yours win. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Query parameters: null and undefined left out, an array repeats the key. */
  readonly query?: Readonly<Record<string, QueryValue | readonly QueryValue[]>> | undefined;
}

/**
 * A WebSocket session: send() messages, receive() the next one, or iterate with for await.
 * An error message from svc (a message that did not fit, a handler that raised) is thrown as
 * SvcError from receive() and from the iteration; the session goes on. Iterating ends when
 * the session is over; leaving a loop early does not close it: call close().
 */
export interface Connection<Send, Receive> extends AsyncIterable<Receive> {
  send(message: Send): void;
  /** The next message, waiting for it; ConnectionClosedError once the session is over. */
  receive(): Promise<Receive>;
  /** Closes the session; resolved once it is closed. */
  close(): Promise<void>;
  readonly closed: boolean;
}

/** What every workload object tells about itself. */
export interface WorkloadInfo<Kind extends string> {
  readonly app: string;
  readonly name: string;
  readonly kind: Kind;
  /** The URL it had when the client was generated; null for functions. */
  readonly url: string | null;
  /** That URL's path, which calls go to on the server found at call time. */
  readonly path: string | null;
  /** False for a public workload. */
  readonly authorized: boolean;
}

/** An ASGI app's generic calls, for every route (the typed methods cover those its OpenAPI description lists). */
export interface AsgiApp {
  /** One HTTP request to a route of the app (path: the app's own route), returned as it came. */
  request(method: string, path: string, init?: AsgiRequestInit): Promise<ClientResponse>;
  /** Opens one of the app's WebSocket routes: text frames as strings, binary ones as Uint8Array. */
  connect(path?: string): Promise<Connection<string | Uint8Array, string | Uint8Array>>;
}

/**
 * What the generated client of an svc app runs on. One copy per generated package, so a
 * client never depends on the exporter that made it; nothing but the platform's fetch,
 * WebSocket, TextEncoder and TextDecoder (Node 20+, Deno, Bun, browsers).
 *
 * The server and the token are looked up at each call: the client's options, else
 * SVC_SERVER and SVC_TOKEN (where there is a process.env), else the server the client was
 * generated from and no token. Each workload is called at the path its URL had then.
 */
import { ERROR_STATUS } from './errors.js';

/** @typedef {import('./runtime.js').ClientOptions} ClientOptions */
/** @typedef {import('./runtime.js').WorkloadInfo<string>} WorkloadInfo */
/** @typedef {import('./runtime.js').AsgiRequestInit} AsgiRequestInit */
/** @typedef {import('./runtime.js').SvcErrorCode} SvcErrorCode */
/** @typedef {Readonly<Record<string, unknown>>} Arguments */
/** @typedef {{ readonly methods: readonly string[], readonly arrays: readonly string[] | null, readonly stream: boolean, readonly raw: boolean }} EndpointSpec */
/**
 * @typedef {{ readonly name: string, readonly method: string, readonly path: string,
 *   readonly parameters: readonly { readonly key: string, readonly name: string, readonly in: string }[],
 *   readonly body: { readonly key: string, readonly contentType: string, readonly json: boolean } | null,
 *   readonly result: 'none' | 'json' | 'text' | 'bytes' }} OperationSpec
 */
/** @typedef {{ readonly messageRaw: boolean, readonly items: 'raw' | 'json' | 'typed', readonly svcErrors: boolean }} SocketTyping */
/**
 * What the runtime uses of a WebSocket, the standard one's or the ws package's.
 * @typedef {{ binaryType: string, onopen: (() => void) | null, onerror: (() => void) | null, onclose: (() => void) | null,
 *   onmessage: ((event: { data: string | ArrayBuffer }) => void) | null, send(data: string | ArrayBuffer | Uint8Array): void, close(code?: number): void }} SocketLike
 */

const BODY_METHODS = ['POST', 'PUT', 'PATCH'];
/** @type {Readonly<Record<number, SvcErrorCode>>} The code of an error answer that is not svc's own (an ASGI app's, a proxy's), by status: as the Python SDK does. */
const STATUS_CODES = { 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 405: 'method_not_allowed', 413: 'payload_too_large', 429: 'rate_limited', 502: 'upstream_unreachable', 503: 'no_capacity' };

/**
 * Every exported client has its own copy of this file; a brand shared through the global
 * symbol registry makes 'instanceof SvcError' true for the errors of all of them.
 */
const SVC_ERROR = Symbol.for('svc-clients.SvcError');
const CONNECTION_CLOSED = Symbol.for('svc-clients.ConnectionClosedError');
const CALL_TIMEOUT = Symbol.for('svc-clients.CallTimeoutError');

/** What a call id looks like (core/services/calls/types.ts; the Python SDK's svc._function_call checks the same shape). */
const CALL_ID = /^call-[0-9a-f]{20}$/;
/** The longest one /outcome request waits on the server (Prefer: wait, at most 60 there); get() asks again for longer waits. */
const WAIT_PER_REQUEST_S = 50;

/** @type {(value: unknown, brand: symbol) => boolean} */
const branded = (value, brand) => typeof value === 'object' && value !== null && /** @type {Record<symbol, unknown>} */ (value)[brand] === true;

export class SvcError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{ readonly status?: number | undefined, readonly hint?: string | undefined, readonly details?: unknown }} [options]
   */
  constructor(code, message, options = {}) {
    super(message);
    Object.defineProperty(this, SVC_ERROR, { value: true });
    this.name = 'SvcError';
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[/** @type {SvcErrorCode} */ (code)] ?? 500;
    this.hint = options.hint ?? null;
    this.details = options.details;
  }

  /** @param {unknown} value */
  static [Symbol.hasInstance](value) {
    return branded(value, SVC_ERROR);
  }
}

export class ConnectionClosedError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    Object.defineProperty(this, CONNECTION_CLOSED, { value: true });
    this.name = 'ConnectionClosedError';
  }

  /** @param {unknown} value */
  static [Symbol.hasInstance](value) {
    return branded(value, CONNECTION_CLOSED);
  }
}

/** EndpointCall#get() gave up waiting: the call has not ended yet (it goes on; get() it again later). */
export class CallTimeoutError extends Error {
  /**
   * @param {string} callId
   * @param {string} message
   */
  constructor(callId, message) {
    super(message);
    Object.defineProperty(this, CALL_TIMEOUT, { value: true });
    this.name = 'CallTimeoutError';
    this.callId = callId;
  }

  /** @param {unknown} value */
  static [Symbol.hasInstance](value) {
    return branded(value, CALL_TIMEOUT);
  }
}

/**
 * The SvcError of svc's error body or message '{"error": {"code", "message", ...}}' (that one key only), else null; 'status' defaults to the code's.
 * @param {unknown} value
 * @param {number} [status]
 */
function svcErrorOf(value, status) {
  /** @type {{ code?: unknown, message?: unknown, hint?: unknown, details?: unknown } | null | undefined} */
  const error = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 ? /** @type {{ error?: any }} */ (value).error : undefined;
  if (error === null || typeof error !== 'object' || typeof error.code !== 'string' || typeof error.message !== 'string') return null;
  return new SvcError(error.code, error.message, { status, hint: typeof error.hint === 'string' ? error.hint : undefined, details: error.details });
}

/**
 * @param {string} text
 * @returns {{ value: unknown } | null}
 */
function parseJson(text) {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}

/**
 * The SvcError of an error answer (status >= 400) to 'what': svc's own code, else one by status, the body in 'details'.
 * @param {number} status
 * @param {string} text
 * @param {string} what
 */
export function errorFromAnswer(status, text, what) {
  const parsed = parseJson(text);
  const own = parsed === null ? null : svcErrorOf(parsed.value, status);
  if (own !== null) return own;
  const code = STATUS_CODES[status] ?? (status >= 500 ? 'internal' : 'bad_request');
  const shown = text.slice(0, 300).trim();
  return new SvcError(code, what + ' answered HTTP ' + status + (shown ? ': ' + shown : ''), { status, details: parsed === null ? undefined : parsed.value });
}

/** @param {string} name */
function environment(name) {
  const process = /** @type {{ process?: { env?: Record<string, string | undefined> } | null }} */ (globalThis).process;
  const value = process !== undefined && process !== null && process.env ? process.env[name] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * A query value as the runtime reads it: booleans as true/false, strings as they are, anything else as JSON.
 * @param {unknown} value
 * @returns {string}
 */
function queryText(value) {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return JSON.stringify(value);
}

/**
 * 'a=1&b=x&b=y': null and undefined left out, arrays as the key repeated (those named in 'arrays', or all when null).
 * @param {Arguments} values
 * @param {readonly string[] | null} arrays
 */
function queryString(values, arrays) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value === null || value === undefined) continue;
    if (Array.isArray(value) && (arrays === null || arrays.includes(key))) {
      for (const item of /** @type {unknown[]} */ (value)) if (item !== null && item !== undefined) query.append(key, queryText(item));
    } else {
      query.append(key, queryText(value));
    }
  }
  return query.toString();
}

/** An answer read whole. */
class ClientResponse {
  /**
   * @param {number} status
   * @param {Readonly<Record<string, string>>} headers
   * @param {Uint8Array} body
   */
  constructor(status, headers, body) {
    this.status = status;
    this.ok = status >= 200 && status < 300;
    this.headers = headers;
    this.body = body;
  }

  text() {
    return new TextDecoder().decode(this.body);
  }

  json() {
    return JSON.parse(this.text());
  }
}

/** One workload of the app, with the options it calls with. */
/** @template Extra */
class Workload {
  /**
   * @param {WorkloadInfo} info
   * @param {ClientOptions} options
   * @param {Extra} extra
   */
  constructor(info, options, extra) {
    this.app = info.app;
    this.name = info.name;
    this.kind = info.kind;
    this.url = info.url;
    this.path = info.path;
    this.authorized = info.authorized;
    Object.defineProperty(this, '_options', { value: Object.freeze({ ...options }) });
    Object.defineProperty(this, '_extra', { value: extra });
    // What defineProperty set (not enumerable, read-only), declared for the type checker.
    /** @type {Readonly<ClientOptions>} */ this._options;
    /** @type {Extra} */ this._extra;
  }

  /** @param {ClientOptions} options */
  withOptions(options) {
    const Class = /** @type {new (info: WorkloadInfo, options: ClientOptions, extra: Extra) => this} */ (this.constructor);
    return new Class(this._info(), { ...this._options, ...options }, this._extra);
  }

  toString() {
    return 'svc client of ' + this.app + '/' + this.name + ' (' + this.kind + ') at ' + (this.url ?? 'no URL');
  }

  /** @returns {WorkloadInfo} */
  _info() {
    return { app: this.app, name: this.name, kind: this.kind, url: this.url, path: this.path, authorized: this.authorized };
  }

  /** The http(s) URL of the workload now: the server from the options, SVC_SERVER, else the one it was generated from. */
  _base() {
    return this._server() + (this.path ?? '');
  }

  /** That server's URL, without a trailing slash. */
  _server() {
    return (this._options.server ?? environment('SVC_SERVER') ?? this._generatedServer()).replace(/\/+$/, '');
  }

  _generatedServer() {
    const url = this.url ?? '';
    /** @type {string} */
    const path = this.path ?? '';
    const base = path !== '' && url.endsWith(path) ? url.slice(0, url.length - path.length) : url;
    return base.startsWith('ws') ? 'http' + base.slice(2) : base;
  }

  _token() {
    return this._options.token !== undefined ? this._options.token : (environment('SVC_TOKEN') ?? null);
  }

  /** @returns {Record<string, string>} */
  _headers() {
    const token = this._token();
    return token ? { authorization: 'Bearer ' + token } : {};
  }

  _where() {
    return 'the svc server (for ' + this.app + '/' + this.name + ')';
  }

  /**
   * @param {string} method
   * @param {string} url
   * @param {string | Uint8Array | undefined} body
   * @param {Record<string, string>} headers
   */
  async _fetch(method, url, body, headers) {
    let response;
    try {
      response = await fetch(url, { method, headers, body: /** @type {BodyInit | undefined} */ (body) });
    } catch (e) {
      const error = /** @type {any} */ (e);
      const reason = error && error.cause && error.cause.message ? error.cause.message : String(error && error.message ? error.message : error);
      throw new SvcError('server_unreachable', 'cannot reach ' + this._where() + ' at ' + url.split('?')[0] + ': ' + reason, {
        hint: 'Check that the server runs and that SVC_SERVER (or the server option) names it.',
      });
    }
    return response;
  }

  /**
   * @param {string} method
   * @param {string} url
   * @param {string | Uint8Array | undefined} body
   * @param {Record<string, string>} headers
   */
  async _exchange(method, url, body, headers) {
    const response = await this._fetch(method, url, body, headers);
    const read = method === 'HEAD' ? new Uint8Array(0) : new Uint8Array(await response.arrayBuffer());
    return new ClientResponse(response.status, Object.fromEntries(response.headers), read);
  }

  /**
   * @param {ClientResponse} response
   * @param {string} what
   */
  _decodeJson(response, what) {
    const parsed = parseJson(response.text());
    if (parsed === null) {
      throw new SvcError('unexpected_response', what + ' answered something that is not JSON: ' + JSON.stringify(response.text().slice(0, 200)), { status: response.status });
    }
    return parsed.value;
  }
}

/**
 * The method an endpoint's request() uses: the first of POST, PUT, PATCH it takes, else GET, else its first.
 * @param {readonly string[]} methods
 * @returns {string}
 */
function callMethod(methods) {
  return BODY_METHODS.find((method) => methods.includes(method)) ?? (methods.includes('GET') || methods.length === 0 ? 'GET' : /** @type {string} */ (methods[0]));
}

/** An HTTP endpoint: request() sends the function's arguments (a JSON body for POST, PUT, PATCH, else the query). */
/** @extends {Workload<EndpointSpec>} */
export class Endpoint extends Workload {
  /** @param {Arguments} [args] */
  request(args) {
    return this._extra.stream ? this._events(args) : this._call(args);
  }

  /** @param {Arguments} [args] */
  raw(args) {
    const { method, url, body, headers } = this._prepare(args, 'application/json');
    return this._exchange(method, url, body, headers);
  }

  /**
   * @param {Arguments | undefined} args
   * @param {string} accept
   */
  _prepare(args, accept) {
    const given = Object.fromEntries(Object.entries(args ?? {}).filter(([, value]) => value !== undefined));
    const method = callMethod(this._extra.methods);
    /** @type {Record<string, string>} */
    const headers = { ...this._headers(), accept };
    let url = this._base();
    /** @type {string | undefined} */
    let body;
    if (BODY_METHODS.includes(method)) {
      body = JSON.stringify(given);
      headers['content-type'] = 'application/json';
    } else {
      const query = queryString(given, this._extra.arrays);
      if (query !== '') url += '?' + query;
    }
    return { method, url, body, headers };
  }

  /**
   * The same request as request(), sent with Prefer: respond-async: svc keeps it as a call and answers 202 at once.
   * @param {Arguments} [args]
   */
  async spawn(args) {
    const { method, url, body, headers } = this._prepare(args, this._extra.stream ? 'text/event-stream' : 'application/json');
    const what = method + ' ' + url.split('?')[0];
    if (headers.authorization === undefined) {
      throw new SvcError('unauthorized', 'spawn() of ' + this.app + '/' + this.name + ' needs a token: svc keeps a request sent with Prefer: respond-async for its workspace, and its outcome is read with a token (a public URL called without one answers at once)', {
        hint: 'Set SVC_TOKEN or the token option; or call request() to wait for the answer.',
      });
    }
    const response = await this._exchange(method, url, body, { ...headers, prefer: 'respond-async' });
    if (response.status >= 400) throw errorFromAnswer(response.status, response.text(), what);
    const deferred = response.status === 202 && (response.headers['preference-applied'] ?? '').includes('respond-async');
    const parsed = deferred ? parseJson(response.text()) : null;
    const callId = parsed !== null && parsed.value !== null && typeof parsed.value === 'object' ? /** @type {{ call_id?: unknown }} */ (parsed.value).call_id : undefined;
    if (typeof callId !== 'string' || !CALL_ID.test(callId)) {
      throw new SvcError('unexpected_response', what + ' with Prefer: respond-async answered ' + response.status + ' without keeping the request as a call: this svc server does not answer requests later', {
        status: response.status,
        hint: 'Upgrade the svc server, or call request() to wait for the answer.',
      });
    }
    return new EndpointCall(this, callId);
  }

  /**
   * The call spawn() started, by its id, from any process of the same workspace.
   * @param {string} callId
   */
  callFromId(callId) {
    if (typeof callId !== 'string' || !CALL_ID.test(callId)) {
      throw new TypeError(JSON.stringify(callId) + ' is not a call id: call ids look like call-0123456789abcdef0123 (EndpointCall#callId, or the end of the Location that ' + this.name + '.spawn() was answered with)');
    }
    return new EndpointCall(this, callId);
  }

  /** @param {Arguments | undefined} args */
  async _call(args) {
    const { method, url, body, headers } = this._prepare(args, 'application/json');
    return this._answer(await this._exchange(method, url, body, headers), method + ' ' + url.split('?')[0]);
  }

  /**
   * The answer as request() resolves to it (an error answer thrown): a live one, or a deferred one's.
   * @param {ClientResponse} response
   * @param {string} what
   */
  _answer(response, what) {
    if (response.status >= 400) throw errorFromAnswer(response.status, response.text(), what);
    if (this._extra.stream) return this._items(new Response(/** @type {BodyInit} */ (response.body)));
    if (this._extra.raw) return response.body;
    return this._decodeJson(response, this.app + '/' + this.name);
  }

  /**
   * A deferred request's final frame (GET /api/v1/calls/<id>/outcome) as request() resolves: the kept answer, decoded by _answer.
   * @param {{ readonly type?: unknown, readonly code?: unknown, readonly exception?: unknown, readonly response?: { readonly status: number, readonly headers: readonly string[], readonly body: string } }} frame
   * @param {string} callId
   */
  _outcome(frame, callId) {
    const kept = frame.response;
    if (kept !== undefined && kept !== null) {
      /** @type {Record<string, string>} */
      const headers = {};
      for (let i = 0; i + 1 < kept.headers.length; i += 2) {
        const name = /** @type {string} */ (kept.headers[i]).toLowerCase();
        const value = /** @type {string} */ (kept.headers[i + 1]);
        headers[name] = headers[name] === undefined ? value : headers[name] + ', ' + value;
      }
      const body = Uint8Array.from(atob(kept.body), (c) => c.charCodeAt(0));
      return this._answer(new ClientResponse(kept.status, headers, body), callMethod(this._extra.methods) + ' ' + (this.url ?? this.path) + ' (call ' + callId + ')');
    }
    if (frame.type === 'error') {
      // svc's own failure (a time-out, a server that stopped): 'exception' is '<code>: <message>'.
      const code = typeof frame.code === 'string' ? frame.code : 'handler_error';
      const text = String(frame.exception ?? 'the request failed');
      throw new SvcError(code, text.startsWith(code + ': ') ? text.slice(code.length + 2) : text);
    }
    throw new SvcError('unexpected_response', 'the call ' + callId + ' is not a request to ' + this.app + '/' + this.name + ' sent with Prefer: respond-async: it has no answer to decode');
  }

  /** @param {Arguments | undefined} args */
  async *_events(args) {
    const { method, url, body, headers } = this._prepare(args, 'text/event-stream');
    const response = await this._fetch(method, url, body, headers);
    if (response.status >= 400) throw errorFromAnswer(response.status, await response.text(), method + ' ' + url.split('?')[0]);
    yield* this._items(response);
  }

  /**
   * The items of a text/event-stream answer, decoded; an error event thrown.
   * @param {Response} response
   */
  async *_items(response) {
    for await (const event of serverSentEvents(response)) {
      const parsed = parseJson(event.data);
      if (parsed === null) throw new SvcError('unexpected_response', this.app + '/' + this.name + ' streamed an item that is not JSON: ' + JSON.stringify(event.data.slice(0, 200)));
      if (event.type === 'error') throw svcErrorOf(parsed.value) ?? new SvcError('handler_error', this.app + '/' + this.name + ' failed: ' + event.data);
      yield parsed.value;
    }
  }
}

/**
 * A request to an endpoint that svc answers later (Prefer: respond-async), as spawn() and callFromId() give it.
 * @template T
 */
class EndpointCall {
  /**
   * @param {Endpoint} endpoint
   * @param {string} callId
   */
  constructor(endpoint, callId) {
    this.callId = callId;
    Object.defineProperty(this, '_endpoint', { value: endpoint });
    /** @type {Endpoint} */ this._endpoint;
  }

  /**
   * Waits for the answer (GET /api/v1/calls/<id>/outcome, in waits of at most 50 s) and resolves to it as request() does.
   * @param {{ readonly timeoutMs?: number | undefined }} [options]
   * @returns {Promise<T>}
   */
  async get(options = {}) {
    const timeoutMs = options.timeoutMs;
    const deadline = timeoutMs === undefined ? null : Date.now() + Math.max(0, timeoutMs);
    for (;;) {
      let left = deadline === null ? WAIT_PER_REQUEST_S : Math.min(WAIT_PER_REQUEST_S, Math.max(0, (deadline - Date.now()) / 1000));
      if (left > 0 && left < 1) {
        // Prefer: wait takes whole seconds, and wait=0 answers at once: sleep out the rest rather than ask in a loop.
        await new Promise((resolve) => setTimeout(resolve, left * 1000));
        left = 0;
      }
      const answer = await this._api('GET', '/outcome', { prefer: 'wait=' + Math.floor(left) });
      const value = /** @type {{ frame?: Parameters<Endpoint['_outcome']>[0], call?: { status?: string } }} */ (answer.json());
      if (answer.status === 200 && value.frame !== undefined) return /** @type {T} */ (this._endpoint._outcome(value.frame, this.callId));
      if (deadline !== null && Date.now() >= deadline) {
        throw new CallTimeoutError(this.callId, 'the call ' + this.callId + ' has not ended within ' + (timeoutMs ?? 0) / 1000 + ' s (it is ' + (value.call?.status ?? 'running') + '); get() it again later');
      }
    }
  }

  /** Cancels the call: a queued one is never sent, a running one is given up; SvcError conflict once it ended. */
  async cancel() {
    await this._api('DELETE', '', {});
  }

  /** queued, running, succeeded, failed, cancelled or expired. */
  async status() {
    return /** @type {{ call: { status: import('./runtime.js').CallStatus } }} */ (((await this._api('GET', '', {})).json())).call.status;
  }

  toString() {
    return 'EndpointCall ' + this.callId + ' of ' + this._endpoint.app + '/' + this._endpoint.name;
  }

  /**
   * A request about the call to svc's API, with the endpoint's server and token; an error answer thrown (409 call_cancelled, ...).
   * @param {string} method
   * @param {string} suffix
   * @param {Record<string, string>} headers
   */
  async _api(method, suffix, headers) {
    const path = '/api/v1/calls/' + this.callId + suffix;
    const endpoint = this._endpoint;
    const response = await endpoint._exchange(method, endpoint._server() + path, undefined, { ...endpoint._headers(), ...headers });
    if (response.status >= 400) throw errorFromAnswer(response.status, response.text(), method + ' ' + path);
    return response;
  }
}

/**
 * The events of a text/event-stream answer, as they arrive: { type, data }.
 * @param {Response} response
 */
async function* serverSentEvents(response) {
  const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let type = 'message';
  /** @type {string[]} */
  let data = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = done ? '' : /** @type {string} */ (lines.pop());
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield { type, data: data.join('\n') };
          type = 'message';
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          let rest = colon < 0 ? '' : line.slice(colon + 1);
          if (rest.startsWith(' ')) rest = rest.slice(1);
          if (field === 'event') type = rest;
          else if (field === 'data') data.push(rest);
        }
      }
      if (done) {
        if (data.length > 0) yield { type, data: data.join('\n') };
        return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A function: it has no URL, so no client can call it; it runs with .remote() from its project. */
/** @extends {Workload<{}>} */
export class FunctionWorkload extends Workload {
  request() {
    throw new TypeError(this.name + ' is a function of ' + this.app + ': it has no URL, so a generated client cannot call it. Call ' + this.name + '.remote(...) from the project that defines it, or run svc run <file>:' + this.name + '.');
  }
}

/** An ASGI app: any route with request(), its WebSocket routes with connect(), and one method per operation of its OpenAPI description. */
/** @extends {Workload<{ readonly operations: readonly OperationSpec[] }>} */
export class Asgi extends Workload {
  /**
   * @param {WorkloadInfo} info
   * @param {ClientOptions} options
   * @param {{ readonly operations: readonly OperationSpec[] }} extra
   */
  constructor(info, options, extra) {
    super(info, options, extra);
    for (const operation of extra.operations) {
      Object.defineProperty(this, operation.name, { value: (/** @type {Arguments | undefined} */ args) => this._operation(operation, args ?? {}) });
    }
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {AsgiRequestInit} [init]
   */
  request(method, path, init = {}) {
    if (init.json !== undefined && init.body !== undefined) throw new TypeError('request(): pass json or body, not both');
    let url = this._base().replace(/\/+$/, '') + '/' + String(path ?? '/').replace(/^\/+/, '');
    const query = queryString(init.query ?? {}, null);
    if (query !== '') url += (url.includes('?') ? '&' : '?') + query;
    const headers = { ...this._headers() };
    /** @type {string | Uint8Array | undefined} */
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['content-type'] = 'application/json';
    }
    const given = init.headers ?? {};
    const mine = new Set(Object.keys(given).map((name) => name.toLowerCase()));
    for (const name of Object.keys(headers)) if (mine.has(name)) delete headers[name];
    return this._exchange(String(method).toUpperCase(), url, body, { ...headers, ...given });
  }

  connect(path = '/') {
    return openSocket(this, path, { messageRaw: true, items: 'raw', svcErrors: false });
  }

  /**
   * One operation: path parameters into the path, query and header ones where they go, the body as JSON (or as given).
   * @param {OperationSpec} operation
   * @param {Arguments} args
   */
  async _operation(operation, args) {
    const path = operation.path.replace(/\{([^}]+)\}/g, (_, /** @type {string} */ name) => {
      const value = args[name];
      if (value === undefined || value === null) throw new TypeError(operation.name + '(): the path parameter ' + name + ' is missing');
      return encodeURIComponent(queryText(value));
    });
    /** @type {Record<string, import('./runtime.js').QueryValue>} */
    const query = {};
    /** @type {Record<string, string>} */
    const headers = {};
    for (const parameter of operation.parameters) {
      const value = args[parameter.key];
      if (value === undefined || value === null) continue;
      if (parameter.in === 'query') query[parameter.name] = /** @type {import('./runtime.js').QueryValue} */ (value);
      else if (parameter.in === 'header') headers[parameter.name] = queryText(value);
    }
    /** @type {{ query: typeof query, headers: typeof headers, json?: unknown, body?: string | Uint8Array }} */
    const init = { query, headers };
    const body = operation.body === null ? undefined : args[operation.body.key];
    if (body !== undefined) {
      const spec = /** @type {NonNullable<OperationSpec['body']>} */ (operation.body);
      if (spec.json) init.json = body;
      else {
        init.body = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
        headers['content-type'] = spec.contentType;
      }
    }
    const response = await this.request(operation.method, path, init);
    const what = operation.method + ' ' + operation.path + ' of ' + this.app + '/' + this.name;
    if (response.status >= 400) throw errorFromAnswer(response.status, response.text(), what);
    switch (operation.result) {
      case 'none':
        return undefined;
      case 'json':
        return this._decodeJson(response, what);
      case 'text':
        return response.text();
      default:
        return response.body;
    }
  }
}

/** A realtime handler: connect() opens a typed WebSocket session. */
/** @extends {Workload<{ readonly messageRaw: boolean, readonly items: SocketTyping['items'] }>} */
export class Realtime extends Workload {
  connect() {
    return openSocket(this, '/', { messageRaw: this._extra.messageRaw, items: this._extra.items, svcErrors: true });
  }
}

/**
 * Opens a WebSocket to the workload (a route of it for ASGI apps), resolved once it is open.
 * The token goes as ?token= (the standard WebSocket API sets no headers; svc removes it
 * before the app sees the request). When the socket does not open, a plain request to the
 * same URL tells why, as the typed error of svc's answer.
 */
/**
 * @param {Workload<unknown>} workload
 * @param {string} path
 * @param {SocketTyping} typing
 */
async function openSocket(workload, path, typing) {
  const WebSocketClass = /** @type {(new (url: string) => SocketLike) | undefined} */ (workload._options.WebSocket ?? globalThis.WebSocket);
  if (typeof WebSocketClass !== 'function') {
    throw new TypeError('connect() needs a WebSocket class and this runtime has none (Node before 22): pass one in the options, createClient({ WebSocket }) with the ws package (npm install ws), or run Node 22 or newer');
  }
  let http = workload._base();
  if (path !== '' && path !== '/') http = http.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '');
  const token = workload._token();
  const url = 'ws' + http.slice(4) + (token ? (http.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token) : '');
  const socket = new WebSocketClass(url);
  socket.binaryType = 'arraybuffer';
  const connection = new Connection(socket, workload, typing);
  const opened = await connection._opened;
  if (!opened) throw await refusal(workload, http);
  return connection;
}

/**
 * @param {Workload<unknown>} workload
 * @param {string} http
 */
async function refusal(workload, http) {
  const unreachable = () => new SvcError('server_unreachable', 'cannot open a WebSocket to ' + workload._where() + ' at ' + http, {
    hint: 'Check that the server runs and that SVC_SERVER (or the server option) names it.',
  });
  try {
    const response = await workload._exchange('GET', http, undefined, workload._headers());
    const error = response.status >= 400 ? errorFromAnswer(response.status, response.text(), 'WebSocket ' + http) : null;
    return error === null || error.code === 'upgrade_required' ? unreachable() : error;
  } catch (error) {
    return error instanceof SvcError ? error : unreachable();
  }
}

/** A WebSocket session: send() messages, receive() what comes back; an async iterable of the messages. */
class Connection {
  /**
   * @param {SocketLike} socket
   * @param {Workload<unknown>} workload
   * @param {SocketTyping} typing
   */
  constructor(socket, workload, typing) {
    this._socket = socket;
    this._workload = workload;
    this._typing = typing;
    /** @type {(string | Uint8Array)[]} */
    this._frames = [];
    /** @type {(() => void)[]} */
    this._waiting = [];
    this.closed = false;
    /** @type {(() => void) | undefined} set by close() */ this._closing;
    /** @type {Promise<boolean>} */
    this._opened = new Promise((resolve) => {
      let open = false;
      socket.onopen = () => {
        open = true;
        resolve(true);
      };
      socket.onerror = () => {
        if (!open) resolve(false);
      };
      socket.onclose = () => {
        this.closed = true;
        if (!open) resolve(false);
        for (const waiter of this._waiting.splice(0)) waiter();
        if (this._closing) this._closing();
      };
    });
    socket.onmessage = (event) => {
      const data = event.data;
      this._frames.push(typeof data === 'string' ? data : new Uint8Array(data));
      const waiter = this._waiting.shift();
      if (waiter) waiter();
    };
  }

  /** @param {unknown} message */
  send(message) {
    if (this.closed) throw this._closedError();
    if (message instanceof Uint8Array || message instanceof ArrayBuffer) this._socket.send(message);
    else if (typeof message === 'string' && this._typing.messageRaw) this._socket.send(message);
    else this._socket.send(JSON.stringify(message));
  }

  async receive() {
    while (this._frames.length === 0) {
      if (this.closed) throw this._closedError();
      await new Promise((resolve) => this._waiting.push(() => resolve(undefined)));
    }
    return this._decode(/** @type {string | Uint8Array} */ (this._frames.shift()));
  }

  close() {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this._closing = () => resolve(undefined);
      this._socket.close(1000);
    });
  }

  [Symbol.asyncIterator]() {
    return {
      next: async () => {
        try {
          return { done: false, value: await this.receive() };
        } catch (error) {
          if (error instanceof ConnectionClosedError) return { done: true, value: undefined };
          throw error;
        }
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  _closedError() {
    return new ConnectionClosedError('the WebSocket to ' + this._workload.app + '/' + this._workload.name + ' is closed');
  }

  /**
   * raw: frames as they came; json: parsed when JSON; typed: parsed, or unexpected_response. svc's error messages are thrown.
   * @param {string | Uint8Array} frame
   */
  _decode(frame) {
    const items = this._typing.items;
    if (typeof frame !== 'string' && items !== 'typed') return frame;
    const text = typeof frame === 'string' ? frame : new TextDecoder().decode(frame);
    const parsed = parseJson(text);
    if (parsed === null) {
      if (items !== 'typed') return frame;
      throw new SvcError('unexpected_response', this._workload.app + '/' + this._workload.name + ' sent a message that is not JSON: ' + JSON.stringify(text.slice(0, 200)));
    }
    const error = this._typing.svcErrors ? svcErrorOf(parsed.value) : null;
    if (error !== null) throw error;
    return items === 'raw' ? frame : parsed.value;
  }
}

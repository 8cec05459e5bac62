/**
 * The headers that cross the gateway, both ways, each in one pass over the
 * raw header list (no header object is built, no name looked up twice).
 *
 * Dropped both ways: hop-by-hop headers (RFC 9110 §7.6.1) and the ones a
 * `Connection` header names. Host is kept (apps build absolute URLs from it,
 * FastAPI's url_for); the gateway's own `X-Request-Id` and `X-Forwarded-*`
 * replace whatever the client sent.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { withoutPlatformCookies } from './platform-cookies.js';

/** Hop-by-hop headers, plus the ones the gateway or undici set themselves. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

/** Request headers the gateway sets itself. */
// x-svc-deferred (deferred.ts) is svc's own mark between its leader and its gateway: never a container's to see.
const REPLACED = new Set([
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-prefix',
  'x-svc-deferred',
]);

const AUTHORIZATION: ReadonlySet<string> = new Set(['authorization']);
const PREFER: ReadonlySet<string> = new Set(['prefer']);

/** Tokens of a Connection header that name no other header (already dropped anyway). */
const PLAIN_CONNECTION = /^\s*(?:keep-alive|close)\s*$/i;

/** What the gateway reads from a request's head, in the same pass that copies it. */
export interface RequestHead {
  /** Header list for the container, flat `[name, value, …]`; the gateway appends its own. */
  readonly forward: string[];
  /** The first Host header, '' without one. */
  readonly host: string;
  /** The declared body length, undefined when none was declared. */
  readonly contentLength: string | undefined;
  /** The client's X-Request-Id, undefined when it sent none or several. */
  readonly requestId: string | undefined;
  /** True when `forward` holds an Authorization header (see withoutAuthorization()). */
  readonly authorization: boolean;
  /** The first Origin header (a browser's cross-origin request: cors.ts), undefined without one. */
  readonly origin: string | undefined;
}

/**
 * Copies the request's headers for the container (`rawHeaders`, names as
 * the client spelled them). `keepLength` forwards `Content-Length` (a body
 * is streamed as it is; a bodyless method sends none).
 */
export function requestHead(raw: readonly string[], keepLength: boolean): RequestHead {
  const forward: string[] = [];
  let host = '';
  let contentLength: string | undefined;
  let requestId: string | undefined;
  let requestIds = 0;
  let connection: string | undefined;
  let authorization = false;
  let origin: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === 'host') {
      // Node's parser keeps the first of several; so does the container.
      if (host !== '') continue;
      host = value;
    } else if (lower === 'content-length') {
      // Node's parser refuses conflicting lengths; a repeated equal one is sent once.
      if (contentLength !== undefined) continue;
      contentLength = value;
      if (!keepLength) continue;
    } else if (HOP_BY_HOP.has(lower)) {
      if (lower === 'connection') connection = connection === undefined ? value : `${connection},${value}`;
      continue;
    } else if (REPLACED.has(lower)) {
      if (lower === 'x-request-id') {
        requestId = value;
        requestIds++;
      }
      continue;
    } else if (lower === 'authorization') authorization = true;
    else if (lower === 'origin') origin ??= value;
    else if (lower === 'cookie') {
      const kept = withoutPlatformCookies(value);
      if (kept !== '') forward.push(name, kept);
      continue;
    }
    forward.push(name, value);
  }
  if (connection !== undefined && !PLAIN_CONNECTION.test(connection)) dropNamed(forward, connection);
  return { forward, host, contentLength, requestId: requestIds === 1 ? requestId : undefined, authorization, origin };
}

/** Removes, in place, the platform's token: user code behind a protected URL never sees it. */
export function withoutAuthorization(head: RequestHead): void {
  if (head.authorization) dropNames(head.forward, AUTHORIZATION);
}

/** A copy of the forwarded headers without Prefer: svc sends a deferred request once, not asking to defer it again. */
export function withoutPrefer(head: RequestHead): string[] {
  const kept = [...head.forward];
  dropNames(kept, PREFER);
  return kept;
}

/** What the gateway passes back of a container's answer. */
export interface ResponseHead {
  /** Header list for the client, flat `[name, value, …]`, the request id last. */
  readonly headers: string[];
  /** The container's Content-Length, -1 when it sent none. */
  readonly contentLength: number;
}

/**
 * Copies a container's response headers (undici's raw list of Buffers) for
 * the client. Content-Length is kept (HEAD answers carry the container's);
 * the container's own X-Request-Id is replaced by the gateway's.
 */
export function responseHead(raw: readonly Buffer[], requestId: string): ResponseHead {
  const headers: string[] = [];
  let contentLength = -1;
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1');
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower)) {
      if (lower === 'connection')
        connection = connection === undefined ? raw[i + 1]!.toString('latin1') : `${connection},${raw[i + 1]!.toString('latin1')}`;
      continue;
    }
    if (lower === 'x-request-id') continue;
    const value = raw[i + 1]!.toString('latin1');
    if (lower === 'content-length') contentLength = Number(value);
    headers.push(name, value);
  }
  if (connection !== undefined && !PLAIN_CONNECTION.test(connection)) dropNamed(headers, connection);
  headers.push('X-Request-Id', requestId);
  return { headers, contentLength };
}

/**
 * The end-to-end headers of a parsed header object (what a follower forwards
 * to the leader, both ways): the same hop-by-hop rules as above, every other
 * header as it is.
 */
export function endToEndHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const connection = headers.connection;
  const named =
    connection === undefined || PLAIN_CONNECTION.test(connection)
      ? new Set<string>()
      : new Set(connection.split(',').map((token) => token.trim().toLowerCase()));
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) kept[name] = value;
  }
  return kept;
}

/** Removes, in place, the headers a Connection header names (rare: most say only keep-alive or close). */
function dropNamed(list: string[], connection: string): void {
  dropNames(
    list,
    new Set(
      connection
        .split(',')
        .map((token) => token.trim().toLowerCase())
        .filter(Boolean),
    ),
  );
}

function dropNames(list: string[], named: ReadonlySet<string>): void {
  let kept = 0;
  for (let i = 0; i < list.length; i += 2) {
    if (named.has(list[i]!.toLowerCase())) continue;
    list[kept++] = list[i]!;
    list[kept++] = list[i + 1]!;
  }
  list.length = kept;
}

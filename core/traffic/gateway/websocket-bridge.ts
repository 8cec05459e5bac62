import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { corsAllows } from '../../model/cors.js';
import { SvcError, toSvcError } from '../../model/errors.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import type { Instance } from '../../infra/registry/types.js';
import { checkAccess } from './access.js';
import { createDomainRouting } from './domain-route.js';
import type { ErrorReporter } from './error-middleware.js';
import type { Admission, Slot } from './admission.js';
import { writeRawError } from './raw-error.js';
import { requestIdOf } from './request-id.js';
import { forwardedFor, protocolOf } from './client-origin.js';
import { parseRequestUrl } from './request-url.js';
import type { RouteMatch, RouteTable } from './route-table.js';
import { nothingAnswers } from './nothing-answers.js';
import { withoutPlatformCookies } from './platform-cookies.js';

export interface WebSocketBridgeOptions {
  readonly routes: RouteTable;
  readonly admission: Admission;
  readonly plugins: PluginHost;
  readonly report: ErrorReporter;
  /** How often idle clients are pinged; one missed pong closes the session. */
  readonly pingIntervalMs?: number;
  /** Believe the proxy in front's X-Forwarded-Proto and -For (client-origin.ts). */
  readonly trustProxy?: boolean;
}

export interface WebSocketBridge {
  /** The `upgrade` listener of the gateway's HTTP server. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

/** Kinds whose containers speak WebSocket. */
const WEBSOCKET_KINDS = new Set(['asgi', 'realtime']);
/** Request headers the container sees (cookies without svc's own); the rest belong to this hop or to the platform. */
const FORWARDED = ['cookie', 'origin', 'user-agent', 'accept-language'];
/**
 * permessage-deflate (RFC 7692) with the client when it offers it, for messages of 1 KiB and more: the
 * client's link is where bytes cost (a chatty JSON socket shrinks several times). The container's hop is
 * a local socket and stays uncompressed: deflating there would cost CPU on both sides and save nothing.
 */
const CLIENT_DEFLATE = {
  threshold: 1024,
  // Each message compressed on its own, both ways: neither end keeps a 32 KiB window of earlier messages
  // (small clients can take it). ws still keeps a socket's zlib stream, once used, until the socket closes.
  serverNoContextTakeover: true,
  clientNoContextTakeover: true,
} as const;
/**
 * The largest message a client may send: uvicorn's own limit (`ws_max_size`, 16 MiB), so the bridge
 * is as strict as the container behind it; one larger closes the session with 1009 as soon as its
 * length is read, before any of it is buffered.
 */
const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Close codes that may not be sent on the wire (RFC 6455 §7.4.1); they become a plain close. */
const UNSENDABLE = new Set([1005, 1006, 1015]);

/**
 * Bridges WebSockets of asgi and realtime workloads: the same access rules
 * as HTTP, checked before the handshake (a refused upgrade gets an HTTP error
 * in the usual JSON shape), then frames passed in order both ways, close
 * codes propagated, and idle clients pinged.
 */
export function createWebSocketBridge(options: WebSocketBridgeOptions): WebSocketBridge {
  const sessions = new Sessions(options.pingIntervalMs ?? 30_000);
  const domains = createDomainRouting(options.plugins, options.routes);

  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, requestId: string): Promise<void> {
    const url = parseRequestUrl(protocolOf(request, options.trustProxy), request.headers.host ?? '', request.url ?? '/');
    const own = options.routes.match(url.pathname, request.headers.host);
    // As for HTTP: svc's own host URLs first, then a custom domain, then the path.
    const match = own?.prefix === '' || !domains ? own : ((await domains.resolve(request.headers.host ?? '', url.pathname)) ?? own);
    const entry = match?.entry;
    const principal = await checkAccess({ plugins: options.plugins, entry, headers: request.headers, url, transport: 'websocket' });
    if (!match || !entry) throw nothingAnswers(url.pathname);
    if (entry.offline) throw entry.offline;
    if (!WEBSOCKET_KINDS.has(entry.workload.kind)) {
      throw new SvcError('bad_request', `${entry.workload.name} is an ${entry.workload.kind} workload: it answers HTTP, not WebSocket.`);
    }
    // A browser always says where the page came from: with cors, only the origins it names may open one.
    const cors = entry.workload.http?.cors;
    const origin = request.headers.origin;
    if (cors && origin !== undefined && !corsAllows(cors, origin)) {
      throw new SvcError(
        'forbidden',
        `pages of ${origin} may not open ${entry.ref.app}/${entry.workload.name}: its cors allows ${cors.origins.join(', ')}.`,
        {
          hint: 'Add the origin to svc.Cors(origins=[...]) and deploy again.',
        },
      );
    }
    // A session holds one slot for its whole life; an upgrade that cannot be admitted is refused before the handshake.
    const gone = new AbortController();
    socket.once('close', () => gone.abort());
    const slot = await options.admission.enter(entry.unit, { maxPending: entry.workload.scaling.maxPendingTasks }, gone.signal);
    let upstream: WebSocket;
    try {
      upstream = await connectUpstream(slot.instance, request, url, match, requestId, principal !== null, options.trustProxy ?? false);
    } catch (error) {
      slot.release();
      throw error;
    }
    const server = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_CLIENT_MESSAGE_BYTES,
      perMessageDeflate: CLIENT_DEFLATE,
      handleProtocols: () => upstream.protocol || false,
    });
    let piped = false;
    server.handleUpgrade(request, socket, head, (client) => {
      piped = true;
      sessions.pipe(client, upstream, slot);
    });
    server.close();
    // ws calls back synchronously when the handshake succeeds; otherwise (a malformed handshake,
    // a client already gone) it answered or dropped the socket itself: give everything back.
    if (!piped) {
      upstream.terminate();
      slot.release();
    }
  }

  return {
    handleUpgrade(request, socket, head) {
      const requestId = requestIdOf(request.headers['x-request-id']);
      socket.on('error', () => socket.destroy());
      upgrade(request, socket, head, requestId).catch((thrown: unknown) => {
        const error = toSvcError(thrown);
        if (!error.expose) options.report(thrown, { method: 'GET', path: request.url ?? '', requestId });
        writeRawError(socket, error, { 'X-Request-Id': requestId });
      });
    },
    close() {
      sessions.close();
    },
  };
}

/** The bridged sessions: each holds its slot until either side closes; idle clients are pinged, and one missed pong ends it. */
class Sessions {
  readonly #sessions = new Set<{ client: WebSocket; upstream: WebSocket }>();
  readonly #alive = new WeakMap<WebSocket, boolean>();
  readonly #pinger: NodeJS.Timeout;

  constructor(pingIntervalMs: number) {
    this.#pinger = setInterval(() => {
      for (const { client } of this.#sessions) {
        if (this.#alive.get(client) === false) client.terminate();
        else {
          this.#alive.set(client, false);
          client.ping();
        }
      }
    }, pingIntervalMs);
    this.#pinger.unref();
  }

  pipe(client: WebSocket, upstream: WebSocket, slot: Slot): void {
    const session = { client, upstream };
    this.#sessions.add(session);
    client.once('close', slot.release);
    upstream.once('close', slot.release);
    this.#alive.set(client, true);
    client.on('pong', () => this.#alive.set(client, true));
    forward(client, upstream);
    forward(upstream, client);
    upstream.resume();
    const end = () => this.#sessions.delete(session);
    client.once('close', end);
    upstream.once('close', end);
  }

  close(): void {
    clearInterval(this.#pinger);
    for (const { client, upstream } of this.#sessions) {
      client.close(1001, 'server shutting down');
      upstream.terminate();
    }
    this.#sessions.clear();
  }
}

/** Opens the container side first, so that a refusal still reaches the client as an HTTP answer. */
function connectUpstream(
  instance: Instance,
  request: IncomingMessage,
  url: URL,
  match: RouteMatch,
  requestId: string,
  authorized: boolean,
  trustProxy: boolean,
): Promise<WebSocket> {
  // The token may ride in the query for browsers; it is the platform's, never the workload's.
  const query = new URLSearchParams(url.search);
  if (authorized) query.delete('token');
  const search = query.size > 0 ? `?${query.toString()}` : '';
  const target =
    instance.address.kind === 'unix'
      ? `ws+unix://${instance.address.socketPath}:${match.rest}${search}`
      : `ws://${instance.address.host}:${instance.address.port}${match.rest}${search}`;
  const headers: Record<string, string> = {
    'x-request-id': requestId,
    'x-forwarded-prefix': match.prefix,
    'x-forwarded-host': request.headers.host ?? '',
    // The client's protocol, which `url` was parsed with.
    'x-forwarded-proto': url.protocol.slice(0, -1),
    'x-forwarded-for': forwardedFor(request, trustProxy),
  };
  for (const name of FORWARDED) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = name === 'cookie' ? withoutPlatformCookies(value) : value;
  }
  if (headers.cookie === '') delete headers.cookie;
  if (!authorized && typeof request.headers.authorization === 'string') headers.authorization = request.headers.authorization;
  const protocols = (request.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return new Promise((resolve, reject) => {
    const upstream = new WebSocket(target, protocols, { headers, perMessageDeflate: false, handshakeTimeout: 10_000 });
    // Paused until the client side is piped: a container that speaks first must not lose its words.
    upstream.once('open', () => {
      upstream.pause();
      resolve(upstream);
    });
    upstream.once('unexpected-response', (_req, response) => {
      response.resume();
      upstream.terminate();
      reject(
        new SvcError(
          response.statusCode === 404 ? 'not_found' : 'bad_request',
          `the workload refused the WebSocket with HTTP ${response.statusCode}.`,
          { status: response.statusCode && response.statusCode >= 400 ? response.statusCode : 502 },
        ),
      );
    });
    upstream.once('error', (error) =>
      reject(
        new SvcError('upstream_unreachable', `the container of this workload could not be reached (${error.message}).`, { cause: error }),
      ),
    );
  });
}

/** Passes frames one way, keeping text and binary apart, and the close code and reason. */
function forward(from: WebSocket, to: WebSocket): void {
  from.on('message', (data: RawData, isBinary: boolean) => {
    if (to.readyState === WebSocket.OPEN) to.send(data, { binary: isBinary });
  });
  from.on('close', (code: number, reason: Buffer) => {
    if (to.readyState === WebSocket.OPEN || to.readyState === WebSocket.CONNECTING) {
      if (UNSENDABLE.has(code)) to.close();
      else to.close(code, reason);
    }
  });
  from.on('error', () => to.terminate());
}

/**
 * The sockets the gateway listens on: HTTP, or with TLS HTTPS (Node's `https`:
 * the default certificate, per-host ones by SNI, reloaded when their files
 * change) and, with `httpPort`, a plain-HTTP listener beside it that serves
 * the same gateway or, with `httpsRedirect`, sends every request to HTTPS.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { drainServer, listen } from './http-server.js';
import type { ErrorReporter } from './respond-error.js';
import type { Certificates } from './tls/certificates.js';
import { ACME_CHALLENGE_PREFIX, createHttpsRedirect, type HttpsRedirectOptions } from './tls/https-redirect.js';
import { watchFiles, type FileWatch } from './tls/watch-files.js';

export interface GatewayHandlers {
  request(req: http.IncomingMessage, res: http.ServerResponse): void;
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  clientError(error: NodeJS.ErrnoException, socket: Duplex): void;
}

export interface Listeners {
  /** The gateway's own listener (`port`): HTTPS with TLS, else HTTP. */
  readonly main: http.Server;
  /** The plain-HTTP listener beside HTTPS (`httpPort`), or null. */
  readonly plain: http.Server | null;
  /** Whether `main` speaks TLS: the base URL is https:// (and wss://). */
  readonly secure: boolean;
  /** Listens on `port`, then `httpPort`; watches the certificate files from then on. */
  listen(host: string, port: number): Promise<void>;
  /** Reads the certificate files again now (what a change to them does by itself); null without TLS. */
  reloadCertificates(): ReturnType<Certificates['reload']> | null;
  /** Stops watching, then drains both listeners for at most `boundMs`. */
  close(boundMs: number): Promise<void>;
}

export interface ListenerOptions {
  /** The listener settings of config/tls-schema.ts's TlsConfig, declared here so that the gateway needs nothing from config/. */
  readonly config: { readonly httpPort: number | null; readonly httpsRedirect: boolean; readonly publicUrl: string | null };
  /** Null: plain HTTP only. */
  readonly certificates: Certificates | null;
  readonly handlers: GatewayHandlers;
  /** Answers ACME HTTP-01 challenges on the plain listener, redirecting or not (HttpsRedirectOptions#challenge). */
  readonly challenge?: HttpsRedirectOptions['challenge'];
  /** A line for svc's log (reloads, and the files that could not be used). */
  readonly log: (text: string) => void;
  readonly report: ErrorReporter;
}

export function createListeners(options: ListenerOptions): Listeners {
  const { certificates, handlers, config } = options;
  const main =
    certificates === null
      ? http.createServer(handlers.request)
      : // HTTP/1.1 over TLS; the default context comes from the options, the others from SNICallback at each handshake.
        https.createServer({ ...certificates.defaultOptions, SNICallback: certificates.sniCallback }, handlers.request);
  serveGateway(main, handlers);
  let plain: http.Server | null = null;
  if (certificates !== null && config.httpPort !== null) {
    if (config.httpsRedirect) {
      const redirect = createHttpsRedirect({
        httpsPort: () => publicHttpsPort(config.publicUrl) ?? (main.address() as AddressInfo).port,
        challenge: options.challenge ?? null,
        report: options.report,
      });
      plain = http.createServer(redirect.request);
      plain.on('upgrade', redirect.upgrade);
      plain.on('clientError', handlers.clientError);
    } else {
      // Serving the gateway: ACME's challenges still go to the ACME client, whatever a workload's routes say.
      const challenge = options.challenge ?? null;
      const request: http.RequestListener =
        challenge === null
          ? handlers.request
          : (req, res) => {
              if ((req.url ?? '').startsWith(ACME_CHALLENGE_PREFIX)) challenge(req, res);
              else handlers.request(req, res);
            };
      plain = serveGateway(http.createServer(request), handlers);
    }
  }
  let watch: FileWatch | null = null;
  const reloadCertificates = () => {
    if (certificates === null) return null;
    const result = certificates.reload();
    // New handshakes get the new default; connections already open keep the context they were made with.
    (main as https.Server).setSecureContext(certificates.defaultOptions);
    for (const problem of result.problems) options.log(`TLS: ${problem}`);
    options.log(`${result.summary} (reloaded)`);
    return result;
  };
  return {
    main: main as http.Server,
    plain,
    secure: certificates !== null,
    async listen(host, port) {
      await listen(main, port, host);
      if (plain !== null) {
        try {
          await listen(plain, config.httpPort!, host, '--config httpPort or SVC_HTTP_PORT');
        } catch (error) {
          await drainServer(main, 0);
          throw error;
        }
      }
      if (certificates !== null) {
        options.log(certificates.summary());
        const report = (error: unknown) => options.report(error, { method: 'TLS', path: '', requestId: undefined });
        watch = watchFiles(certificates.watched, reloadCertificates, report);
      }
    },
    reloadCertificates,
    async close(boundMs) {
      watch?.close();
      await Promise.all([drainServer(main as http.Server, boundMs), plain === null ? undefined : drainServer(plain, boundMs)]);
    },
  };
}

/**
 * The HTTPS port clients reach, when an https publicUrl names it (svc on 8443 behind a
 * port forward from 443, say); else null: the port HTTPS listens on.
 */
function publicHttpsPort(publicUrl: string | null): number | null {
  if (publicUrl === null || !publicUrl.startsWith('https:')) return null;
  return Number(new URL(publicUrl).port || 443);
}

/** The gateway on a listener: requests, WebSocket upgrades and what Node cannot parse. */
/** Silence on a connection after which the kernel starts probing whether its peer is still there. */
const KEEPALIVE_AFTER_MS = 60_000;

function serveGateway<T extends http.Server | https.Server>(server: T, handlers: GatewayHandlers): T {
  // No bound on a request's whole time: Node's default (5 minutes) cut an upload of many GiB over a slow
  // link with 408 part-way. The headers stay bounded (headersTimeout, 60 s); a streamed upload's pauses are
  // bounded where the API reads it (core/http/api/idle-body.ts); a client that vanished without closing
  // its connection is found by TCP keep-alive probes, from a minute of silence on.
  server.requestTimeout = 0;
  server.on('connection', (socket: Socket) => socket.setKeepAlive(true, KEEPALIVE_AFTER_MS));
  server.on('upgrade', handlers.upgrade);
  server.on('clientError', handlers.clientError);
  return server;
}

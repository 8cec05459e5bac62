/**
 * The plain-HTTP listener's answer with `httpsRedirect`: 308 to the same URL
 * over HTTPS (308 keeps the method and body), except ACME's HTTP-01
 * challenges, which certificate authorities fetch over plain HTTP: those go
 * to `challenge` when one is given (the ACME client's responder), else they
 * are redirected like the rest.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError } from '../../../model/errors.js';
import { writeRawError } from '../raw-error.js';
import { respondError, type ErrorReporter } from '../respond-error.js';
import { parseRequestUrl } from '../request-url.js';

/** Where ACME HTTP-01 challenges are fetched (RFC 8555, section 8.3). */
export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

export interface HttpsRedirectOptions {
  /** The port clients reach HTTPS at (the listener's, known once it listens). */
  readonly httpsPort: () => number;
  /** Answers a request under ACME_CHALLENGE_PREFIX; null: nothing answers challenges here. */
  readonly challenge: ((req: IncomingMessage, res: ServerResponse) => void) | null;
  readonly report: ErrorReporter;
}

export interface HttpsRedirect {
  request(req: IncomingMessage, res: ServerResponse): void;
  /** A WebSocket upgrade on plain HTTP gets the same 308 (browsers refuse it; tools show where to go). */
  upgrade(req: IncomingMessage, socket: Duplex): void;
}

export function createHttpsRedirect(options: HttpsRedirectOptions): HttpsRedirect {
  return {
    request(req, res) {
      if (options.challenge !== null && (req.url ?? '').startsWith(ACME_CHALLENGE_PREFIX)) return options.challenge(req, res);
      const location = httpsLocation(req, options.httpsPort());
      if (location instanceof SvcError) return respondError(res, location, undefined, options.report);
      res.writeHead(308, { Location: location, 'Content-Length': '0', 'Cache-Control': 'no-store' }).end();
    },
    upgrade(req, socket) {
      const location = httpsLocation(req, options.httpsPort());
      if (location instanceof SvcError) return writeRawError(socket, location);
      socket.end(`HTTP/1.1 308 Permanent Redirect\r\nLocation: ${location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    },
  };
}

/** The request's URL with https and the HTTPS port (none for 443); a missing or malformed Host is the client's mistake. */
function httpsLocation(req: IncomingMessage, httpsPort: number): string | SvcError {
  try {
    const url = parseRequestUrl('http', req.headers.host ?? '', req.url ?? '/');
    url.protocol = 'https:';
    url.port = httpsPort === 443 ? '' : String(httpsPort);
    return url.href;
  } catch (error) {
    if (error instanceof SvcError) return error;
    throw error;
  }
}

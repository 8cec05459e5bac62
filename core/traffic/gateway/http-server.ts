/**
 * The platform's HTTP server around the gateway: listening, answering what
 * Node cannot parse, the liveness route, and draining on close.
 */
import type http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Middleware } from 'koa';
import { SvcError } from '../../model/errors.js';
import { HEALTH_PATH } from '../../model/platform-paths.js';
import { writeRawError } from './raw-error.js';

/** How long requests still in flight when svc stops (API calls) may take before their connections are cut. */
export const SERVER_DRAIN_MS = 5_000;

/**
 * Stops accepting connections and lets requests in flight finish, for at most
 * `boundMs`. Node closes only connections idle at the moment of `close()`; a
 * keep-alive connection whose request ends later would hold the server open
 * until its keep-alive timeout, so idle ones are closed again until none is left.
 */
export async function drainServer(server: http.Server | https.Server, boundMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), 20);
  const cut = setTimeout(() => server.closeAllConnections(), boundMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}

/**
 * Requests Node cannot even parse never reach Koa: answer them in the same
 * JSON shape (431 for oversized headers, else 400: headers that took past
 * Node's headersTimeout say so) and close the connection.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const failure =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new SvcError('headers_too_large', 'the request headers are larger than the gateway accepts (16 KiB in all).', {
          hint: 'Send fewer or shorter headers or cookies.',
        })
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new SvcError('bad_request', "the request's headers did not all arrive in time (a minute).", {
            hint: 'Send the headers at once; a body may then take as long as it needs.',
          })
        : new SvcError('bad_request', 'the request is not valid HTTP.');
  writeRawError(socket, failure);
}

/** The platform's own liveness route; workspaces cannot be named `_svc`. */
export const healthRoute: Middleware = async (ctx, next) => {
  if (ctx.path !== HEALTH_PATH) return next();
  ctx.body = { status: 'ok' };
};

/** Listens on `host:port`; a port in use is `config_invalid` saying how to choose another (with `setting`). */
export function listen(server: http.Server | https.Server, port: number, host: string, setting = '--port'): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new SvcError('config_invalid', `port ${port} on ${host} is already in use.`, {
            hint: `Stop the other process or choose another port with ${setting} (0 picks a free one).`,
          }),
        );
      } else reject(error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** The URL clients on this machine reach a listening address at (a wildcard address means loopback); https:// when it speaks TLS. */
export function baseUrl(address: AddressInfo, secure = false): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${secure ? 'https' : 'http'}://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}

import http from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, type SvcError } from '../errors.js';

/**
 * Answers on a bare socket, where no Koa context exists (a refused WebSocket
 * upgrade, a request Node could not parse), in the one error shape, then closes it.
 */
export function writeRawError(socket: Duplex, error: SvcError, extraHeaders: Record<string, string> = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(error));
  const headers = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close', ...error.headers, ...extraHeaders };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(`HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status] ?? ''}\r\n${head}\r\n${body}`);
}

import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { SvcError } from '../../model/errors.js';
import { errorAnswer } from './respond-error.js';

/**
 * Answers on a bare socket, where no response object exists (a refused
 * WebSocket upgrade, a request Node could not parse), in the one error shape
 * (see respond-error.ts), then closes it.
 */
export function writeRawError(socket: Duplex, error: SvcError, extraHeaders: Record<string, string> = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const answer = errorAnswer(error, undefined);
  const headers: Record<string, string> = { ...answer.headers, Connection: 'close', ...extraHeaders };
  let head = `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status] ?? ''}\r\n`;
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  socket.end(`${head}\r\n${answer.body}`);
}

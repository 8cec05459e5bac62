/**
 * The bytes one request moved on its client's connection, both ways, head and body: what the connection's
 * counters grew by since the previous request on it ended (`svc usage`'s bytes in and out). Requests on
 * one connection follow each other, so each gets its own share; the marks live on the socket itself (two
 * numbers, no allocation per request).
 */
import type { Socket } from 'node:net';

const READ = Symbol('svc.bytesReadMark');
const WRITTEN = Symbol('svc.bytesWrittenMark');

interface Marked {
  [READ]?: number;
  [WRITTEN]?: number;
}

/** Bytes read from the client since the last call on this socket (the first: since it opened). */
export function bytesInSinceLast(socket: Socket): number {
  return sinceLast(socket as Socket & Marked, READ, socket.bytesRead);
}

/** Bytes written to the client since the last call on this socket. */
export function bytesOutSinceLast(socket: Socket): number {
  return sinceLast(socket as Socket & Marked, WRITTEN, socket.bytesWritten);
}

/**
 * A request no workload counts (the API, the dashboard) moves the marks past its bytes when it ends, so
 * that the next workload request on a kept-alive connection (a proxy's) is not billed for them.
 */
export function skipWireBytes(socket: Socket | null): void {
  if (socket === null) return;
  bytesInSinceLast(socket);
  bytesOutSinceLast(socket);
}

function sinceLast(marked: Marked, mark: typeof READ | typeof WRITTEN, now: number): number {
  const moved = now - (marked[mark] ?? 0);
  marked[mark] = now;
  return moved;
}

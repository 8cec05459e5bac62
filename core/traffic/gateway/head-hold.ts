import type { ServerResponse } from 'node:http';

/** The longest a streamed answer's head waits for its first piece. */
export const HEAD_HOLD_MS = 1;

const held = new Set<ServerResponse>();
/** A release is due: one timer serves every head held meanwhile. */
let armed = false;

/**
 * Holds the head of a streamed answer (chunked, SSE: no length to collect it
 * by) in the client's corked socket until its first piece or its end comes,
 * for at most HEAD_HOLD_MS, so that they leave together in one write. A
 * container writes its head and its body apart (uvicorn sends each ASGI
 * message as it comes), and the body often arrives in a later read than the
 * head: without the hold a short chunked answer cost the client two writes,
 * where one of known length costs one. A stream slow to start (SSE) gets its
 * head that much later; its pieces go out as they come. Returns false, the
 * head sent, when it cannot wait: no socket yet (a pipelined answer, which
 * Node keeps until it has one), or a socket corked already.
 */
export function holdHead(res: ServerResponse): boolean {
  const socket = res.socket;
  if (socket === null || socket.writableCorked !== 0) {
    res.flushHeaders();
    return false;
  }
  socket.cork();
  res.flushHeaders();
  held.add(res);
  if (!armed) {
    armed = true;
    setTimeout(releaseAll, HEAD_HOLD_MS).unref();
  }
  return true;
}

/** The first piece came: it leaves with the head at the end of this turn (with the end too, when that came in the same read). */
export function releaseHead(res: ServerResponse): void {
  if (held.delete(res)) process.nextTick(uncork, res);
}

/** The answer ends now: `end()` uncorks the socket itself. */
export function forgetHead(res: ServerResponse): void {
  held.delete(res);
}

function uncork(res: ServerResponse): void {
  // An answer that ended uncorked its socket itself, which may serve the connection's next request by now.
  if (!res.writableEnded) res.socket?.uncork();
}

function releaseAll(): void {
  armed = false;
  for (const res of held) uncork(res);
  held.clear();
}

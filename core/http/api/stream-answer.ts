/**
 * A streamed API answer (a call's frames, a log follow) piped to the response
 * directly. Koa would pipe it with `Stream.pipeline`, which makes an
 * AbortController per answer and aborts it, with a DOMException and its stack,
 * once the answer is out: more than a warm remote call's own frames cost the
 * gateway. The ends are the same as Koa's: the body is destroyed when the
 * client goes (a call's slot is released then), the response when the body fails.
 *
 * What the body gives in one turn of the event loop goes out in one write:
 * a call's last frame and the end of the chunked body (which comes a few
 * ticks after it) reach the client together, and a log frame is held for no
 * longer than the rest of that turn.
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { FileRangeStream } from '../../infra/files/file-range-stream.js';

export function pipeAnswer(res: ServerResponse, body: Readable, knownLength = false): void {
  // Koa's type for a stream of unknown kind; a streamed answer has no length unless its route knows it (a file's).
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', 'application/octet-stream');
  if (!knownLength) res.removeHeader('Content-Length');
  if (res.destroyed || res.writableEnded || (res.socket !== null && !res.socket.writable)) {
    body.destroy(); // the client is gone already
    return;
  }
  // A file's bytes go out through buffers it reuses (no cork: each write is a whole MiB already).
  if (body instanceof FileRangeStream) {
    void body.writeTo(res);
    return;
  }
  let corked = false;
  // Before pipe()'s own listener, so that its write lands in the cork.
  body.on('data', () => {
    if (corked) return;
    corked = true;
    res.cork();
    setImmediate(() => {
      corked = false;
      if (!res.writableEnded) res.uncork(); // end() uncorks it all itself
    });
  });
  res.once('close', () => body.destroy()); // also after the end: destroying an ended stream changes nothing
  body.once('error', () => res.destroy());
  body.pipe(res);
}

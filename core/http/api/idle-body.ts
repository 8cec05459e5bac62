/**
 * A streamed request body (a volume's file, a bundle, a map's inputs) has no bound on its whole time: an
 * upload of many GiB over a slow link takes what it takes (Node's own bound, `requestTimeout`, 5 minutes
 * by default, is off: core/traffic/gateway/listeners.ts). What is bounded is a pause: a body that sends
 * nothing for BODY_IDLE_MS is cut off, so that a client that stopped sending does not hold its upload's
 * room in the volume, and its temporary file, for ever.
 */
import type { IncomingMessage } from 'node:http';
import { SvcError } from '../../model/errors.js';

/** How long a streamed body may send nothing before it is cut off (nginx's `client_body_timeout` is 60 s). */
export const BODY_IDLE_MS = 120_000;

/** Cuts `req` off (`client_closed`) once its body sent nothing for `idleMs`; nothing once the body ended. */
export function cutOffWhenIdle(req: IncomingMessage, idleMs = BODY_IDLE_MS): void {
  if (req.complete) return;
  const cutOff = () =>
    req.destroy(
      new SvcError('client_closed', `the request's body sent nothing for ${idleMs / 1000} s, and was cut off.`, {
        hint: 'Send the body without long pauses; a slow link is fine, a stop is not.',
      }),
    );
  // The socket's own idle timer: while the body comes, the answer has not started, so it counts the body's pauses.
  req.setTimeout(idleMs, cutOff);
  const ended = () => {
    req.removeListener('timeout', cutOff);
    req.socket?.setTimeout(0); // the answer may take as long as it takes (a call waiting for its result)
  };
  req.once('end', ended);
  req.once('close', ended);
}

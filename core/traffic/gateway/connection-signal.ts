import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';

const signals = new WeakMap<Socket, AbortSignal>();

/**
 * An AbortSignal that aborts when the client's connection closes, made once
 * per connection and shared by its requests. Over HTTP/1.1 a request is only
 * cut short by its connection closing, so this is exactly "the client went
 * away" for each of them; and an AbortSignal costs several µs to make, too
 * much to spend on every request of a keep-alive connection.
 */
export function connectionSignal(socket: Socket): AbortSignal {
  let signal = signals.get(socket);
  if (signal === undefined) {
    const controller = new AbortController();
    signal = controller.signal;
    // Pipelined requests of one connection may all wait in admission's queue at once.
    setMaxListeners(0, signal);
    if (socket.destroyed) controller.abort();
    else socket.once('close', () => controller.abort());
    signals.set(socket, signal);
  }
  return signal;
}

/**
 * A spinner on stderr while the CLI waits for the server (a deploy answers
 * once images are built and containers healthy): on a terminal one line that
 * redraws itself with the seconds waited; elsewhere (CI, a file) the plain
 * `• text` progress line, once.
 */
import type { Output } from './output.js';
import type { TextSink } from './context.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Spinner {
  /** Clears the line (on a terminal); the caller prints the outcome. */
  stop(): void;
}

export function startSpinner(out: Output, stderr: TextSink, text: string): Spinner {
  if (!stderr.isTTY) {
    out.step(text);
    return { stop: () => {} };
  }
  const started = Date.now();
  let frame = 0;
  const draw = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    stderr.write(`\r\u001b[2K${FRAMES[frame++ % FRAMES.length]} ${text}${seconds > 0 ? ` ${seconds}s` : ''}`);
  };
  draw();
  const timer = setInterval(draw, 100);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      stderr.write('\r\u001b[2K');
    },
  };
}

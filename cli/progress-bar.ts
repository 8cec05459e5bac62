/**
 * A progress bar on stderr while a file moves (`svc volume put | get`): on a terminal one line that
 * redraws itself at most ten times a second with the bar, the share done, the bytes and the rate;
 * elsewhere (CI, a file) nothing, the command's own line per file says what moved.
 */
import { formatBytes } from '../core/model/format-bytes.js';
import type { TextSink } from './context.js';

const WIDTH = 24;

export interface ProgressBar {
  /** `bytes` more have moved. */
  advance(bytes: number): void;
  /** Clears the line (on a terminal); the caller prints the outcome. */
  stop(): void;
}

export function startProgressBar(stderr: TextSink, label: string, total: number): ProgressBar {
  if (!stderr.isTTY) return { advance: () => {}, stop: () => {} };
  const started = Date.now();
  let done = 0;
  let drawnAt = 0;
  const draw = () => {
    drawnAt = Date.now();
    const share = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(share * WIDTH);
    const seconds = Math.max(0.001, (drawnAt - started) / 1000);
    const rate = `${formatBytes(Math.round(done / seconds))}/s`;
    const bar = `${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}`;
    stderr.write(`\r\u001b[2K${label} ${bar} ${Math.floor(share * 100)}% ${formatBytes(done)} of ${formatBytes(total)} ${rate}`);
  };
  draw();
  return {
    advance(bytes) {
      done += bytes;
      if (Date.now() - drawnAt >= 100) draw();
    },
    stop() {
      stderr.write('\r\u001b[2K');
    },
  };
}

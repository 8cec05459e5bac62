/** The local side of `svc shell` in tests: a terminal the test types into and reads, of a size it changes. */
import { PassThrough } from 'node:stream';
import type { ShellTerminal } from '../../cli/commands/shell.js';

/** A terminal a test types into and reads, of a size it changes. */
export function testTerminal(rows: number, cols: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  let screen = '';
  output.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
  const listeners = new Set<() => void>();
  const size = { rows, cols };
  const terminal: ShellTerminal = {
    input,
    output,
    size: () => ({ ...size }),
    onResize: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
    raw: () => () => {},
    term: 'xterm-256color',
  };
  return {
    terminal,
    type: (text: string) => input.write(text),
    screen: () => screen,
    resize(to: { rows: number; cols: number }) {
      Object.assign(size, to);
      for (const listener of listeners) listener();
    },
  };
}

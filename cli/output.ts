/**
 * The CLI's output style, in one place. Results go to stdout (so
 * `svc serve app.py > urls.txt` works); progress, logs and errors go to
 * stderr. Colours only on a TTY, and never with NO_COLOR.
 */
import { SvcError, toSvcError } from '../core/model/errors.js';

export interface Output {
  /** A result line on stdout. */
  result(text?: string): void;
  /** Progress on stderr: `• text`. */
  step(text: string): void;
  /** A finished step on stderr: `✓ text`. */
  done(text: string): void;
  warn(text: string): void;
  /** A log line of a workload on stderr. */
  log(source: string, text: string, system?: boolean): void;
  readonly color: Palette;
}

export interface Palette {
  bold(s: string): string;
  dim(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  red(s: string): string;
  cyan(s: string): string;
}

export function createOutput(stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): Output {
  const color = palette(Boolean(stderr.isTTY) && !process.env.NO_COLOR);
  const outColor = palette(Boolean(stdout.isTTY) && !process.env.NO_COLOR);
  return {
    result: (text = '') => stdout.write(`${text}\n`),
    step: (text) => stderr.write(`${color.dim('•')} ${text}\n`),
    done: (text) => stderr.write(`${color.green('✓')} ${text}\n`),
    warn: (text) => stderr.write(`${color.yellow('!')} ${text}\n`),
    log: (source, text, system = false) => stderr.write(`${color.cyan(source)} ${color.dim('|')} ${system ? color.dim(text) : text}\n`),
    color: outColor,
  };
}

function palette(enabled: boolean): Palette {
  const wrap = (open: number, close: number) => (s: string) => (enabled ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return { bold: wrap(1, 22), dim: wrap(2, 22), green: wrap(32, 39), yellow: wrap(33, 39), red: wrap(31, 39), cyan: wrap(36, 39) };
}

/** Prints an error with its hint on stderr. Returns the exit code to use. */
export function printError(error: unknown, stderr: NodeJS.WriteStream = process.stderr): number {
  const svcError = toSvcError(error);
  const color = palette(Boolean(stderr.isTTY) && !process.env.NO_COLOR);
  stderr.write(`${color.red('✗')} ${svcError.message}\n`);
  if (svcError.hint) stderr.write(`  ${color.dim(svcError.hint)}\n`);
  if (!(error instanceof SvcError) && error instanceof Error && error.stack) stderr.write(`${color.dim(error.stack)}\n`);
  return 1;
}

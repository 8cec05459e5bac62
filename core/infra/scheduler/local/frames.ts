/**
 * What the Python runtime tells the driver, one JSON object per line (see
 * sdk/python/svc/runtime/_frames.py): events on a spawned container's fd 3
 * and the template's, and, for containers forked by a checkpoint template,
 * everything (pid, output lines, events) over the control connection.
 */
import type { ExitStatus } from '../../processes/group.js';

export type RuntimeEvent =
  | { readonly event: 'listening'; readonly worker: number; readonly pid: number; readonly socket: string }
  | {
      readonly event: 'worker_exited';
      readonly worker: number;
      readonly pid: number;
      readonly status: string;
      readonly restartIn: number | null;
    }
  /** A call ran past its time-out: the worker stops taking requests and is replaced once it exited. */
  | { readonly event: 'worker_retiring'; readonly worker: number; readonly pid: number }
  | { readonly event: 'ready'; readonly pid: number }
  | { readonly event: 'container_exited'; readonly container: string; readonly pid: number; readonly exit: ExitStatus };

export type Frame =
  | { readonly t: 'started'; readonly pid: number }
  | { readonly t: 'error'; readonly message: string }
  | { readonly t: 'out' | 'err'; readonly text: string }
  | { readonly t: 'event'; readonly event: RuntimeEvent };

/** One frame, or null for a line that is not one (never trusted further than its shape). */
export function parseFrame(line: string): Frame | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  switch (value.t) {
    case 'started':
      return isInt(value.pid) ? { t: 'started', pid: value.pid } : null;
    case 'error':
      return typeof value.message === 'string' ? { t: 'error', message: value.message } : null;
    case 'out':
    case 'err':
      return typeof value.text === 'string' ? { t: value.t, text: value.text } : null;
    case 'event': {
      const event = parseEvent(value);
      return event ? { t: 'event', event } : null;
    }
    default:
      return null;
  }
}

function parseEvent(value: Record<string, unknown>): RuntimeEvent | null {
  const { pid } = value;
  if (!isInt(pid)) return null;
  switch (value.event) {
    case 'listening':
      return isInt(value.worker) && typeof value.socket === 'string'
        ? { event: 'listening', worker: value.worker, pid, socket: value.socket }
        : null;
    case 'worker_exited': {
      const restartIn = typeof value.restart_in === 'number' ? value.restart_in : null;
      return isInt(value.worker) && typeof value.status === 'string'
        ? { event: 'worker_exited', worker: value.worker, pid, status: value.status, restartIn }
        : null;
    }
    case 'worker_retiring':
      return isInt(value.worker) ? { event: 'worker_retiring', worker: value.worker, pid } : null;
    case 'ready':
      return { event: 'ready', pid };
    case 'container_exited': {
      if (typeof value.container !== 'string') return null;
      const code = isInt(value.code) ? value.code : null;
      const signal = typeof value.signal === 'string' ? (value.signal as NodeJS.Signals) : null;
      return { event: 'container_exited', container: value.container, pid, exit: { code, signal } };
    }
    default:
      return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

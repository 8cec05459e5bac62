/**
 * One segment file of a deployment's log (core/infra/logs/log-files.ts keeps two
 * per deployment and rotates them): one JSON object per line, appended, and
 * read back strictly (a torn last line, damage or another shape is skipped,
 * never trusted); plus the bound that picks which read lines memory keeps.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { nameProblem } from '../../model/names.js';
import type { DeploymentLogLine } from './types.js';

/** What a segment holds, counted as memory counts it: lines, and bytes of their text. */
export interface SegmentCount {
  lines: number;
  bytes: number;
  /** The file may end in a torn line (a crash, a failed append): the next append starts with a newline. */
  torn: boolean;
}

const STREAMS = new Set(['stdout', 'stderr', 'system']);

/** A workspace, app or workload name that is safe as a path segment: a lowercase DNS label. */
export function validName(name: string): boolean {
  return nameProblem(name, 'app') === null;
}

export function encodeLine(line: DeploymentLogLine): string {
  return `${JSON.stringify(line)}\n`;
}

/** Appends to the segment, making its folders first if they are missing (new, or removed with the app's last deployment). */
export async function appendToSegment(file: string, chunk: string): Promise<void> {
  try {
    await appendFile(file, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(path.dirname(file), { recursive: true });
    await appendFile(file, chunk);
  }
}

/** The lines of a segment's text, and its count. What follows the last newline is a line cut short by a crash (or nothing). */
export function parseSegment(text: string): { lines: DeploymentLogLine[]; count: SegmentCount } {
  const parts = text.split('\n');
  const torn = parts.pop() !== '';
  const lines = parts.map(parseLine).filter((line): line is DeploymentLogLine => line !== null);
  return { lines, count: { lines: lines.length, bytes: lines.reduce((n, l) => n + Buffer.byteLength(l.text), 0), torn } };
}

/** A stored line, or null for anything that is not one. */
function parseLine(text: string): DeploymentLogLine | null {
  if (text === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { time, container, stream, text: line, version } = value as Record<string, unknown>;
  if (
    typeof time !== 'string' ||
    typeof container !== 'string' ||
    typeof stream !== 'string' ||
    !STREAMS.has(stream) ||
    typeof line !== 'string'
  )
    return null;
  if (version !== undefined && !(typeof version === 'number' && Number.isSafeInteger(version))) return null;
  return { time, container, stream: stream as DeploymentLogLine['stream'], text: line, ...(version === undefined ? {} : { version }) };
}

/** The last lines within the bounds, as memory keeps them: at most `maxLines`, and at most `maxBytes` of text unless one line. */
export function lastWithin(lines: DeploymentLogLine[], maxLines: number, maxBytes: number): DeploymentLogLine[] {
  let start = lines.length;
  let bytes = 0;
  while (start > 0 && lines.length - start < maxLines) {
    const size = Buffer.byteLength(lines[start - 1]!.text);
    if (bytes + size > maxBytes && start < lines.length) break;
    bytes += size;
    start -= 1;
  }
  return lines.slice(start);
}

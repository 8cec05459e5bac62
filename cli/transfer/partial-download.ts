/**
 * What a download into `to` keeps beside it until it has all of the file, so that the next download goes on
 * from there:
 * - `<to>.svc-partial`: the bytes so far.
 * - `<to>.svc-partial.parts`: for a download fetched in parts at once (`svc volume get`), the file's ETag,
 *   its size and the spans of bytes already written (the partial file has the file's size, with holes).
 * - `<to>.svc-partial.etag`: for a download fetched from the start over one connection (`vol.get_file` in
 *   Python, a file of one part), the file's ETag: the partial file holds its first bytes, as many as it has.
 * One of the two records at a time: a download in parts removes the `.etag` record before it writes a byte
 * out of order, so that a reader of `.etag` never takes a file with holes for a beginning.
 */
import { readFileSync } from 'node:fs';
import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { SvcError } from '../../core/model/errors.js';
import type { ApiClient } from '../api-client.js';

export interface PartialFiles {
  readonly partial: string;
  readonly etag: string;
  readonly parts: string;
}

/** What a download into `to` keeps beside it: `<to>.svc-partial`, and that name with a suffix (its records, its lock). */
const PARTIAL_SUFFIX = '.svc-partial';

export function partialFilesOf(to: string): PartialFiles {
  const partial = `${to}${PARTIAL_SUFFIX}`;
  return { partial, etag: `${partial}.etag`, parts: `${partial}.parts` };
}

/** The lock one download into `to` holds (download-lock.ts): `vol.get_file` in Python takes the same. */
export const lockFileOf = (to: string) => `${to}${PARTIAL_SUFFIX}.lock`;

/** Whether `name` is one of the files a download keeps beside its target (or their temporary and aside names): not a file of its own. */
export function isDownloadLeftover(name: string): boolean {
  return /\.svc-partial(\.etag|\.parts|\.lock)?(\.\d+.*)?$/.test(name);
}

/** Spans of bytes, each `[start, end)`, sorted and apart (two that touch are one). */
export type Spans = readonly (readonly [number, number])[];

/**
 * The `.parts` record: which bytes of which version of the file are written. It also names the machine's
 * boot it was written in (not kept here): after a restart, bytes written before it may never have reached
 * the disk (the partial file reads zeros there), so a record of another boot is not gone on from.
 */
export interface PartsRecord {
  readonly etag: string;
  readonly size: number;
  readonly done: Spans;
}

/** What an earlier download into the same target left to go on from: the spans it has of a version. */
export interface Resumable {
  readonly etag: string;
  /** The file's size, where the record knows it (a `.parts` record); null for a beginning (`.etag`). */
  readonly size: number | null;
  readonly done: Spans;
}

export async function sizeOf(file: string): Promise<number> {
  return stat(file).then(
    (info) => info.size,
    () => 0,
  );
}

/** The bytes an earlier download left and the version they are of; null when there is nothing to go on from. */
export async function resumableOf(files: PartialFiles): Promise<Resumable | null> {
  const [bytes, parts, etag] = await Promise.all([
    sizeOf(files.partial),
    readFile(files.parts, 'utf8').catch(() => null),
    readFile(files.etag, 'utf8').catch(() => ''),
  ]);
  if (parts !== null) {
    const record = partsRecordOf(parts);
    // A record without its file, or beside a file of another size, is of nothing that is there.
    return record !== null && bytes === record.size ? { etag: record.etag, size: record.size, done: record.done } : null;
  }
  return bytes > 0 && etag.trim() !== '' ? { etag: etag.trim(), size: null, done: [[0, bytes]] } : null;
}

/** The record as written by `saveParts`; null for anything else (a record cut short, or not one): started over. */
function partsRecordOf(text: string): PartsRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const { etag, size, done, boot } = (value ?? {}) as Record<string, unknown>;
  if (boot !== currentBoot()) return null;
  if (typeof etag !== 'string' || etag === '' || !Number.isSafeInteger(size) || (size as number) < 0 || !Array.isArray(done)) return null;
  let reached = 0;
  for (const span of done) {
    const [start, end] = Array.isArray(span) ? span : [];
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < reached || end <= start || end > (size as number))
      return null;
    reached = end;
  }
  return { etag, size: size as number, done: done as [number, number][] };
}

/** Writes the `.parts` record whole (a new file renamed over the last): a download stopped mid-write leaves the one before. */
export async function saveParts(files: PartialFiles, record: PartsRecord): Promise<void> {
  const next = `${files.parts}.${process.pid}`;
  await writeFile(next, JSON.stringify({ ...record, boot: currentBoot() }));
  await rename(next, files.parts);
}

/**
 * This boot of the machine: the kernel's id of it (Linux), else when it booted, to the minute, from the
 * clock and the uptime (a clock set meanwhile reads as a restart: the download then starts over).
 */
export function currentBoot(): string {
  bootSeen ??= readBootId() ?? `booted-at-minute-${Math.round((Date.now() / 1000 - os.uptime()) / 60)}`;
  return bootSeen;
}

let bootSeen: string | undefined;

function readBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** `spans` with `[start, end)` added. */
export function withSpan(spans: Spans, start: number, end: number): Spans {
  if (end <= start) return spans;
  const merged: [number, number][] = [];
  for (const [from, to] of [...spans, [start, end] as const].sort((x, y) => x[0] - y[0])) {
    const last = merged.at(-1);
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged;
}

/** The spans of `[0, size)` that `done` does not cover. */
export function missingSpans(done: Spans, size: number): Spans {
  const missing: [number, number][] = [];
  let at = 0;
  for (const [start, end] of done) {
    if (start > at) missing.push([at, Math.min(start, size)]);
    at = Math.max(at, end);
  }
  if (at < size) missing.push([at, size]);
  return missing;
}

export const bytesIn = (spans: Spans) => spans.reduce((sum, [start, end]) => sum + end - start, 0);

/** Renames the complete partial file onto `to`, once it has the size the server gave (when it gave one). */
export async function finish(files: PartialFiles, to: string, total: number | null): Promise<void> {
  const size = await sizeOf(files.partial);
  if (total !== null && size !== total) {
    await discard(files);
    throw new SvcError('unexpected_response', `the download into ${to} has ${size} bytes where the server announced ${total}.`, {
      hint: 'Run the same command again; it starts over.',
    });
  }
  await rename(files.partial, to);
  await Promise.all([unlink(files.etag).catch(() => {}), unlink(files.parts).catch(() => {})]);
}

/** Removes the partial file and its records: nothing to go on from. */
export async function discard(files: PartialFiles): Promise<void> {
  await Promise.all([files.partial, files.etag, files.parts].map((file) => unlink(file).catch(() => {})));
}

/** A download cut off after `kept` bytes; `partial` is where they are to go on from (null: nothing was kept). */
export function stoppedAfter(client: ApiClient, kept: number, cut: Error | null, partial: string | null): SvcError {
  return new SvcError(
    'server_unreachable',
    `the download from ${client.server} stopped after ${kept} bytes (${cut?.message ?? 'the connection ended early'}).`,
    {
      hint:
        partial === null
          ? 'Run the same command again; it starts over.'
          : `Run the same command again: it goes on from there (the bytes so far are in ${partial}).`,
      ...(cut === null ? {} : { cause: cut }),
    },
  );
}

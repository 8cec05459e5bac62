/**
 * Writes a folder as an image layer: a tar (POSIX ustar, with pax records
 * for long names) gzip'd, reproducible byte for byte — entries in name order,
 * owner root, mtime 0, modes reduced to 755/644 — so the same files give the
 * same digests and a registry that has the layer is never sent it again.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, readdir, readlink, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export interface LayerBlob {
  /** sha256 of the gzip'd bytes: the layer's digest in the manifest. */
  readonly digest: string;
  /** sha256 of the tar itself: the layer's `diff_id` in the image config. */
  readonly diffId: string;
  /** Bytes of the gzip'd layer. */
  readonly size: number;
  readonly file: string;
}

interface Entry {
  /** Path inside the image, without a leading slash; directories end in `/`. */
  readonly name: string;
  readonly type: 'file' | 'dir' | 'symlink';
  readonly mode: number;
  readonly size: number;
  readonly source?: string;
  readonly target?: string;
}

const BLOCK = 512;

/**
 * Tars `dir` as `/<under>/…` (its parent folders included) into `file`
 * (a temporary name of the caller's: it is removed if writing fails).
 * Anything but files, folders and symlinks (sockets, devices) is left out.
 */
export async function writeLayer(dir: string, under: string, file: string): Promise<LayerBlob> {
  const entries = [...parentEntries(under), ...(await walk(dir, under.replace(/^\/+|\/+$/g, '')))];
  const tarHash = createHash('sha256');
  const gzHash = createHash('sha256');
  let size = 0;
  const tar = Readable.from(tarStream(entries));
  tar.on('data', (chunk: Buffer) => tarHash.update(chunk));
  const gzip = createGzip({ level: 6 });
  gzip.on('data', (chunk: Buffer) => {
    gzHash.update(chunk);
    size += chunk.length;
  });
  try {
    await pipeline(tar, gzip, createWriteStream(file));
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  }
  return { digest: `sha256:${gzHash.digest('hex')}`, diffId: `sha256:${tarHash.digest('hex')}`, size, file };
}

function parentEntries(under: string): Entry[] {
  const parts = under.replace(/^\/+|\/+$/g, '').split('/').filter(Boolean);
  return parts.map((_, index) => ({ name: `${parts.slice(0, index + 1).join('/')}/`, type: 'dir', mode: 0o755, size: 0 }));
}

async function walk(dir: string, prefix: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  // Byte order of names, not the locale's: the same on every machine.
  const names = (await readdir(dir)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of names) {
    const source = path.join(dir, name);
    const inside = `${prefix}/${name}`;
    const info = await lstat(source);
    if (info.isDirectory()) {
      entries.push({ name: `${inside}/`, type: 'dir', mode: 0o755, size: 0 });
      entries.push(...(await walk(source, inside)));
    } else if (info.isFile()) {
      entries.push({ name: inside, type: 'file', mode: info.mode & 0o100 ? 0o755 : 0o644, size: info.size, source });
    } else if (info.isSymbolicLink()) {
      entries.push({ name: inside, type: 'symlink', mode: 0o777, size: 0, target: await readlink(source) });
    }
  }
  return entries;
}

async function* tarStream(entries: readonly Entry[]): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    yield* headers(entry);
    if (entry.type !== 'file') continue;
    let written = 0;
    for await (const chunk of createReadStream(entry.source!)) {
      written += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    if (written !== entry.size) throw new Error(`${entry.source} changed size while it was written into an image layer`);
    const padding = (BLOCK - (entry.size % BLOCK)) % BLOCK;
    if (padding > 0) yield Buffer.alloc(padding);
  }
  yield Buffer.alloc(BLOCK * 2);
}

/** The entry's header, preceded by a pax header when a name or link is too long or not ASCII for ustar. */
function headers(entry: Entry): Buffer[] {
  const records: string[] = [];
  const name = Buffer.from(entry.name);
  if (name.length > 100 || !isAscii(entry.name)) records.push(paxRecord('path', entry.name));
  if (entry.target !== undefined && (Buffer.byteLength(entry.target) > 100 || !isAscii(entry.target))) records.push(paxRecord('linkpath', entry.target));
  if (entry.size > 0o77777777777) records.push(paxRecord('size', String(entry.size)));
  const out: Buffer[] = [];
  if (records.length > 0) {
    const body = Buffer.from(records.join(''));
    out.push(header({ name: 'PaxHeaders/entry', type: 'x', mode: 0o644, size: body.length, link: '' }), body, Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK));
  }
  const type = entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2';
  out.push(header({ name: entry.name, type, mode: entry.mode, size: entry.type === 'file' ? entry.size : 0, link: entry.target ?? '' }));
  return out;
}

/** `<length> <key>=<value>\n`, where the length counts the whole record, its own digits included. */
function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(rest) + 1;
  while (String(length).length + Buffer.byteLength(rest) !== length) length = String(length).length + Buffer.byteLength(rest);
  return `${length}${rest}`;
}

function header(fields: { name: string; type: string; mode: number; size: number; link: string }): Buffer {
  const block = Buffer.alloc(BLOCK);
  // Names that need a pax record get a truncated stand-in here, which readers ignore.
  block.write(truncate(fields.name, 100), 0, 'utf8');
  octal(block, 100, 8, fields.mode);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, Math.min(fields.size, 0o77777777777));
  octal(block, 136, 12, 0);
  block.fill(' ', 148, 156);
  block.write(fields.type, 156, 'ascii');
  block.write(truncate(fields.link, 100), 157, 'utf8');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  block.write('root', 265, 'ascii');
  block.write('root', 297, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, 'ascii');
}

function truncate(text: string, bytes: number): string {
  const buffer = Buffer.from(text);
  return buffer.length <= bytes ? text : buffer.subarray(0, bytes).toString('latin1').replace(/[^\x20-\x7e]/g, '_');
}

function isAscii(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

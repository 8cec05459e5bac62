/**
 * Writes a folder as an image layer: a tar (tar-stream: POSIX ustar, pax
 * records for long or non-ASCII names) gzip'd, reproducible byte for byte —
 * entries in name order, owner root, mtime 0, modes reduced to 755/644 — so
 * the same files give the same digests and a registry that has the layer is
 * never sent it again.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, readdir, readlink, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';

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
  const pack = tar.pack();
  pack.on('data', (chunk) => tarHash.update(chunk as Buffer));
  const gzip = createGzip({ level: 6 });
  gzip.on('data', (chunk: Buffer) => {
    gzHash.update(chunk);
    size += chunk.length;
  });
  try {
    await Promise.all([addEntries(pack, entries), pipeline(pack, gzip, createWriteStream(file))]);
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  }
  return { digest: `sha256:${gzHash.digest('hex')}`, diffId: `sha256:${tarHash.digest('hex')}`, size, file };
}

function parentEntries(under: string): Entry[] {
  const parts = under
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .filter(Boolean);
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

/** Adds each entry in turn (one file open at a time), then the end of the archive. */
async function addEntries(pack: tar.Pack, entries: readonly Entry[]): Promise<void> {
  try {
    for (const entry of entries) {
      const header = { name: entry.name, mode: entry.mode, mtime: new Date(0), uid: 0, gid: 0, uname: 'root', gname: 'root' };
      if (entry.type === 'file') {
        let written = 0;
        const source = createReadStream(entry.source!).on('data', (chunk) => (written += chunk.length));
        try {
          await pipeline(source, pack.entry({ ...header, type: 'file', size: entry.size }));
        } catch (error) {
          throw written === entry.size ? error : new Error(`${entry.source} changed size while it was written into an image layer`);
        }
      } else {
        const extra = entry.type === 'dir' ? ({ type: 'directory' } as const) : ({ type: 'symlink', linkname: entry.target! } as const);
        await new Promise<void>((resolve, reject) => pack.entry({ ...header, ...extra }, (error) => (error ? reject(error) : resolve())));
      }
    }
    pack.finalize();
  } catch (error) {
    pack.destroy(error as Error);
    throw error;
  }
}

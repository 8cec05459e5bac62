/**
 * Safe extraction of a bundle (docs/architecture.md, "Bundles"). Refused, with an SvcError
 * naming the entry and the rule: absolute paths, `..` components, symbolic
 * links whose target leaves the destination (directly or through other
 * links), every hard link, devices, fifos and other special entries, entries
 * beneath a symbolic link, a path given twice, and archives past the limits
 * (total size, one entry, number of entries). Sizes are checked from each
 * entry's header, before any of its data is written, so a gzip bomb stops at
 * its first oversized entry. The archive is extracted into a temporary
 * sibling of the destination and renamed into place: the destination either
 * holds the whole bundle or does not exist. Links are created last, after
 * every file: nothing is ever written through one.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, symlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import { SvcError } from '../../model/errors.js';
import { removeAbandoned } from '../processes/abandoned.js';
import { formatBytes } from '../../model/format-bytes.js';
import { readTar, TarFormatError, type EntrySink, type TarHeader } from './tar-reader.js';
import { DEFAULT_EXTRACT_LIMITS, type ExtractLimits, type BundleRule } from './types.js';

export interface ExtractResult {
  /** The destination folder. */
  readonly dir: string;
  /** True when the destination existed already and nothing was extracted. */
  readonly reused: boolean;
  /** Entries extracted (0 when reused). */
  readonly entries: number;
  /** Bytes of file data written (0 when reused). */
  readonly bytes: number;
}

/** Hops through links allowed while resolving one link's target (Linux allows 40). */
const MAX_LINK_HOPS = 40;

/**
 * Extracts the tar.gz `file` into `destDir`, which must not exist yet; when
 * it does (content-addressed destinations), it is reused as it is.
 */
export async function extractBundle(file: string, destDir: string, limits: Partial<ExtractLimits> = {}): Promise<ExtractResult> {
  const bounds: ExtractLimits = { ...DEFAULT_EXTRACT_LIMITS, ...limits };
  const dest = path.resolve(destDir);
  if (await isDirectory(dest)) return { dir: dest, reused: true, entries: 0, bytes: 0 };
  const label = path.basename(file);
  await assertGzip(file, label);

  const parent = path.dirname(dest);
  await mkdir(parent, { recursive: true });
  await removeAbandonedExtractions(parent);
  const tmp = path.join(parent, `.${path.basename(dest)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(tmp, { mode: 0o755 });
  try {
    const extraction = new Extraction(tmp, bounds, label);
    await extraction.run(file);
    try {
      await rename(tmp, dest);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another process extracted the same bundle first: theirs is as good as ours.
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await isDirectory(dest))) {
        await rm(tmp, { recursive: true, force: true });
        return { dir: dest, reused: true, entries: 0, bytes: 0 };
      }
      throw error;
    }
    return { dir: dest, reused: false, entries: extraction.entries, bytes: extraction.bytes };
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw error;
  }
}

type Kind = 'file' | 'dir' | 'link';

/** Rules that say the file is damaged rather than crafted. */
const DAMAGED: ReadonlySet<BundleRule> = new Set<BundleRule>(['not_gzip', 'corrupt', 'truncated', 'trailing_data']);

class Extraction {
  entries = 0;
  bytes = 0;
  readonly #kinds = new Map<string, Kind>();
  readonly #links = new Map<string, string>();
  /** Files being written; closed if the archive fails midway. */
  readonly #open = new Set<FileHandle>();

  constructor(
    readonly root: string,
    readonly limits: ExtractLimits,
    readonly label: string,
  ) {}

  async run(file: string): Promise<void> {
    const input = createReadStream(file);
    const gunzip = createGunzip();
    input.on('error', (error) => gunzip.destroy(error));
    input.pipe(gunzip);
    try {
      await readTar(gunzip, { entry: (header) => this.#entry(header), meta: (size) => this.#count(size, null) });
    } catch (error) {
      throw this.#translate(error);
    } finally {
      input.destroy();
      gunzip.destroy();
      await Promise.all([...this.#open].map((handle) => handle.close().catch(() => {})));
    }
    await this.#createLinks();
  }

  #reject(rule: BundleRule, entry: string | null, reason: string): SvcError {
    const tooLarge = rule === 'entry_too_large' || rule === 'total_too_large' || rule === 'too_many_entries';
    const subject = entry === null ? '' : `entry ${JSON.stringify(entry)} `;
    return new SvcError(tooLarge ? 'bundle_too_large' : 'bundle_invalid', `refused to extract bundle ${this.label}: ${subject}${reason}`, {
      hint: tooLarge
        ? 'Keep what the app does not need at run time out of the bundle with .svcignore.'
        : DAMAGED.has(rule)
          ? 'The file was damaged or cut short on its way: bundle the project again with `python -m svc.bundle`.'
          : 'Bundles made by `python -m svc.bundle` never hold such entries; rebuild the bundle with it.',
      details: { entry, rule },
    });
  }

  #translate(error: unknown): unknown {
    if (error instanceof SvcError) return error;
    if (error instanceof TarFormatError) return this.#reject(error.rule, error.entry, error.message);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR') return this.#reject('truncated', null, 'the gzip stream ends early (the file is truncated)');
    if (typeof code === 'string' && code.startsWith('Z_'))
      return this.#reject('corrupt', null, `the gzip data is corrupt (${(error as Error).message})`);
    return error;
  }

  /** Adds `size` to the bytes written so far; `total_too_large` before it would pass the limit. */
  #count(size: number, entry: string | null): void {
    if (size > this.limits.maxTotalBytes - this.bytes) {
      const what = entry === null ? `an extended header of ${formatBytes(size)}` : `(${formatBytes(size)})`;
      throw this.#reject(
        'total_too_large',
        entry,
        `${what} would take the bundle past its limit of ${formatBytes(this.limits.maxTotalBytes)} in all`,
      );
    }
    this.bytes += size;
  }

  async #entry(header: TarHeader): Promise<EntrySink | null> {
    const name = header.path;
    if (++this.entries > this.limits.maxEntries)
      throw this.#reject('too_many_entries', name, `is one more than the ${this.limits.maxEntries} entries a bundle may hold`);
    const relative = this.#safePath(name);
    switch (header.type) {
      case 'hardlink':
        throw this.#reject('hard_link', name, `is a hard link (to ${JSON.stringify(header.linkpath)}); bundles may not hold hard links`);
      case 'character-device':
      case 'block-device':
      case 'fifo':
        throw this.#reject('special_file', name, `is a ${header.type.replace('-', ' ')}; bundles hold only files, folders and links`);
      case 'other':
        throw this.#reject(
          'unsupported_type',
          name,
          `has the unsupported tar type ${JSON.stringify(header.typeflag)}; bundles hold only files, folders and links`,
        );
      default:
        break;
    }
    if (header.type !== 'file' && header.size !== 0)
      throw this.#reject('bad_header', name, `is a ${header.type} with a size (${header.size} bytes)`);
    if (header.size > this.limits.maxEntryBytes) {
      throw this.#reject(
        'entry_too_large',
        name,
        `is ${formatBytes(header.size)}, more than the ${formatBytes(this.limits.maxEntryBytes)} one entry may hold`,
      );
    }
    this.#count(header.size, name);
    if (relative === '') {
      if (header.type === 'directory') return null; // `./`: the destination itself
      throw this.#reject('bad_header', name, 'has an empty path');
    }
    this.#claim(relative, header.type === 'directory' ? 'dir' : header.type === 'symlink' ? 'link' : 'file', name);
    const target = path.join(this.root, relative);
    if (header.type === 'directory') {
      await this.#fs(name, () => mkdir(target, { recursive: true, mode: 0o755 }));
      return null;
    }
    if (header.type === 'symlink') {
      if (header.linkpath === '') throw this.#reject('bad_header', name, 'is a link without a target');
      if (header.linkpath.startsWith('/'))
        throw this.#reject('link_outside', name, `is a link to the absolute path ${JSON.stringify(header.linkpath)}`);
      this.#links.set(relative, header.linkpath);
      return null;
    }
    return this.#fileSink(name, target, header.mode & 0o111 ? 0o755 : 0o644);
  }

  /** The normalised relative path of an entry, or a rejection for absolute paths and `..`. */
  #safePath(name: string): string {
    if (name.includes('\0')) throw this.#reject('bad_header', name, 'has a NUL character in its path');
    if (name.startsWith('/')) throw this.#reject('absolute_path', name, 'has an absolute path');
    const parts = name.split('/').filter((part) => part !== '' && part !== '.');
    if (parts.includes('..')) throw this.#reject('parent_component', name, 'has a ".." component in its path');
    const relative = parts.join('/');
    const resolved = path.resolve(this.root, relative);
    if (resolved !== this.root && !resolved.startsWith(this.root + path.sep))
      throw this.#reject('parent_component', name, 'leaves the destination');
    return relative;
  }

  /** Records the entry; rejects a path given twice and anything beneath a file or a link. */
  #claim(relative: string, kind: Kind, name: string): void {
    const parts = relative.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      const ancestor = parts.slice(0, depth).join('/');
      const found = this.#kinds.get(ancestor);
      if (found === 'link') throw this.#reject('beneath_link', name, `lies beneath the link ${JSON.stringify(ancestor)}`);
      if (found === 'file') throw this.#reject('duplicate', name, `lies beneath the file ${JSON.stringify(ancestor)}`);
      if (found === undefined) this.#kinds.set(ancestor, 'dir');
    }
    const existing = this.#kinds.get(relative);
    if (existing !== undefined && !(existing === 'dir' && kind === 'dir')) {
      throw this.#reject(
        'duplicate',
        name,
        existing === 'dir' ? 'replaces a folder that holds other entries' : 'appears twice in the archive',
      );
    }
    this.#kinds.set(relative, kind);
  }

  async #fileSink(name: string, target: string, mode: number): Promise<EntrySink> {
    await this.#fs(name, () => mkdir(path.dirname(target), { recursive: true, mode: 0o755 }));
    // `wx`: O_CREAT | O_EXCL, which never follows a link and never replaces anything.
    const handle = await this.#fs(name, () => open(target, 'wx', mode));
    this.#open.add(handle);
    return {
      write: async (chunk) => {
        // One write(2) may write less than asked: loop until the chunk is on disk.
        for (let done = 0; done < chunk.length; ) done += (await handle.write(chunk, done, chunk.length - done)).bytesWritten;
      },
      close: async () => {
        this.#open.delete(handle);
        await handle.close();
      },
    };
  }

  async #fs<T>(name: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENAMETOOLONG' || code === 'ENOTDIR' || code === 'EEXIST' || code === 'EISDIR' || code === 'EILSEQ') {
        throw this.#reject('bad_header', name, `cannot be written (${code})`);
      }
      throw error;
    }
  }

  /** Every link's target is resolved as the kernel would, through the other links; it must stay inside. */
  async #createLinks(): Promise<void> {
    for (const [relative, target] of [...this.#links].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      this.#assertInside(relative, target);
      const where = path.join(this.root, relative);
      await this.#fs(relative, () => mkdir(path.dirname(where), { recursive: true, mode: 0o755 }));
      await this.#fs(relative, () => symlink(target, where));
    }
  }

  #assertInside(relative: string, target: string): void {
    let hops = 0;
    const outside = () => this.#reject('link_outside', relative, `is a link to ${JSON.stringify(target)}, which leads outside the bundle`);
    const walk = (base: readonly string[], linkTarget: string): string[] => {
      if (linkTarget.startsWith('/')) throw outside();
      const stack = [...base];
      for (const part of linkTarget.split('/')) {
        if (part === '' || part === '.') continue;
        if (part === '..') {
          if (stack.length === 0) throw outside();
          stack.pop();
          continue;
        }
        stack.push(part);
        const next = this.#links.get(stack.join('/'));
        if (next === undefined) continue;
        if (++hops > MAX_LINK_HOPS)
          throw this.#reject('link_loop', relative, `is a link to ${JSON.stringify(target)}, which loops through other links`);
        stack.pop();
        const resolved = walk(stack, next);
        stack.splice(0, stack.length, ...resolved);
      }
      return stack;
    };
    walk(relative.split('/').slice(0, -1), target);
  }
}

async function isDirectory(dir: string): Promise<boolean> {
  const found = await stat(dir).catch(() => null);
  return found !== null && found.isDirectory();
}

async function assertGzip(file: string, label: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    if (bytesRead < 2 || head[0] !== 0x1f || head[1] !== 0x8b) {
      throw new SvcError('bundle_invalid', `refused to extract bundle ${label}: it is not a gzip file`, {
        hint: 'A bundle is a tar.gz made by `python -m svc.bundle`.',
        details: { entry: null, rule: 'not_gzip' },
      });
    }
  } finally {
    await handle.close();
  }
}

/** Half-extracted folders of svc processes that died mid-extraction (their pid is in the name). */
function removeAbandonedExtractions(parent: string): Promise<void> {
  return removeAbandoned(parent, (entry) => Number(/^\..+\.tmp-(\d+)-[0-9a-f]+$/.exec(entry)?.[1]) || null);
}

/**
 * Reads the entries of a tar archive with `tar-stream` (ustar, pax extended
 * headers, GNU long names) and hands each entry's header to a callback, which
 * decides where the entry's data goes, before any of that data is read. It
 * judges nothing but the format; what is safe to extract is the extractor's
 * business.
 *
 * What svc adds to tar-stream: reading stops at the end-of-archive block, as
 * GNU tar and Python's tarfile do (tar-stream reads on past it), with at most
 * 1 MiB accepted after it; an archive without that block is truncated;
 * extended headers before one entry are bounded; and the raw type flag of an
 * unknown entry type, which tar-stream reports only as `null`, is kept for
 * messages. For these, the bytes fed since the last entry's end are kept:
 * tar-stream tells where each entry's header is (`offset`), never what
 * follows it.
 */
import tar from 'tar-stream';
import type { BundleRule } from './types.js';

const BLOCK = 512;
/** Bytes of extended headers (pax records, GNU long names) accepted before one entry. */
const MAX_META_BYTES = 1024 * 1024;
/** Bytes accepted after the end-of-archive block (tar pads to its record size, 10 KiB by default). */
const MAX_TRAILING_BYTES = 1024 * 1024;

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'character-device' | 'block-device' | 'fifo' | 'other';

export interface TarHeader {
  /** The path as the archive spells it (pax `path` and GNU long names applied). */
  readonly path: string;
  readonly type: TarEntryType;
  /** The raw type flag, for messages about unsupported types. */
  readonly typeflag: string;
  readonly size: number;
  readonly mode: number;
  /** Target of a symbolic or hard link. */
  readonly linkpath: string;
}

/** Where one entry's data goes. */
export interface EntrySink {
  write(chunk: Buffer): Promise<void>;
  close(): Promise<void>;
}

export interface TarHooks {
  /** Called for every entry before its data; returns a sink, or null to skip the data. */
  entry(header: TarHeader): Promise<EntrySink | null>;
  /** Called before each entry that extended headers precede, with their bytes (header blocks included). */
  meta?(size: number): void;
}

/** A format problem; the extractor turns it into an SvcError naming the bundle. */
export class TarFormatError extends Error {
  constructor(
    readonly rule: BundleRule,
    message: string,
    readonly entry: string | null = null,
  ) {
    super(message);
    this.name = 'TarFormatError';
  }
}

/** Reads `input` (the decompressed archive) to its end, calling `hooks` for each entry. */
export function readTar(input: AsyncIterable<Buffer>, hooks: TarHooks): Promise<void> {
  return new TarReader(hooks).run(input);
}

type Source = tar.ExtractEvents['entry'][1];

const TYPES: Record<tar.Header['type'], TarEntryType> = {
  file: 'file',
  'contiguous-file': 'file', // a regular file to everyone but a few old systems
  link: 'hardlink',
  symlink: 'symlink',
  directory: 'directory',
  'character-device': 'character-device',
  'block-device': 'block-device',
  fifo: 'fifo',
};

class TarReader {
  readonly #hooks: TarHooks;
  readonly #extract = tar.extract();
  /** Bytes fed to the extractor, and those kept from `#next` on. */
  #fed = 0;
  #kept: { start: number; bytes: Buffer }[] = [];
  /** Where the header after the last entry is: the end-of-archive block, or more. */
  #next = 0;
  /** True once the block at `#next` is the end-of-archive block; bytes after it count as trailing. */
  #ended = false;
  #trailing = 0;
  /** The last entry, for "ends inside entry" while `#fed` is short of `#next`; its handling, while it runs. */
  #current: string | null = null;
  #handling: Promise<void> = Promise.resolve();
  /** Settles once the end-of-archive block is found: the extractor, stopped before it, neither drains nor finishes. */
  #foundEnd: () => void = () => {};
  readonly #endFound = new Promise<void>((resolve) => (this.#foundEnd = resolve));
  #failure: unknown = null;

  constructor(hooks: TarHooks) {
    this.#hooks = hooks;
  }

  async run(input: AsyncIterable<Buffer>): Promise<void> {
    const extract = this.#extract;
    const failed = new Promise<never>((_, reject) => {
      extract.on('error', (error: Error) => reject(this.#failure ?? formatError(error, this.#fed < this.#next ? this.#current : null)));
      extract.on('entry', (header, stream, next) => {
        stream.on('error', () => {}); // the extractor's own 'error' reports it
        this.#handling = this.#entry(header, stream)
          .then(() => {
            if (!this.#atEnd()) next(); // checked before the extractor reads on
          })
          .catch((error: unknown) => {
            // Keep svc's own errors; one tar-stream raised reaches the 'error' listener itself.
            if (!extract.destroying) this.#failure = error;
            extract.destroy(error instanceof Error ? error : new Error(String(error)));
          });
      });
    });
    failed.catch(() => {}); // awaited below, through `race`
    const race = <T>(promise: Promise<T>) => Promise.race([promise, failed]);
    try {
      for await (const chunk of input) {
        if (this.#ended) this.#countTrailing(chunk.length);
        else await race(this.#feed(chunk));
      }
      if (!this.#ended) await race(this.#finish());
      if (!this.#ended) throw new TarFormatError('truncated', 'the archive ends without its end-of-archive block (truncated?)');
      await race(this.#handling);
    } finally {
      extract.destroy();
      await this.#handling; // an entry's hook still running (a file being opened) settles before the caller cleans up
    }
  }

  async #feed(chunk: Buffer): Promise<void> {
    if (this.#fed + chunk.length > this.#next) this.#kept.push({ start: this.#fed, bytes: chunk });
    this.#fed += chunk.length;
    if (this.#atEnd()) {
      // The extractor gets the archive up to its end-of-archive block, nothing after it.
      const before = this.#next - (this.#fed - chunk.length);
      if (before > 0 && !this.#extract.write(chunk.subarray(0, before))) await this.#drained();
      return;
    }
    if (this.#fed - this.#next > MAX_META_BYTES + BLOCK) {
      throw new TarFormatError('bad_header', `more than ${MAX_META_BYTES} bytes of extended headers before one entry`);
    }
    if (!this.#extract.write(chunk)) await this.#drained();
  }

  #drained(): Promise<void> {
    return Promise.race([new Promise<void>((resolve) => this.#extract.once('drain', resolve)), this.#endFound]);
  }

  /** True (and from then on) once the block at `#next` is all zeros; counts what follows it as trailing. */
  #atEnd(): boolean {
    if (this.#ended) return true;
    const block = this.#bytes(this.#next, BLOCK);
    if (block === null || !block.every((byte) => byte === 0)) return false;
    this.#ended = true;
    this.#kept = [];
    this.#foundEnd();
    this.#countTrailing(this.#fed - this.#next - BLOCK);
    return true;
  }

  #countTrailing(bytes: number): void {
    this.#trailing += bytes;
    if (this.#trailing > MAX_TRAILING_BYTES) {
      throw new TarFormatError('trailing_data', `it holds more than ${MAX_TRAILING_BYTES} bytes after the end of the archive`);
    }
  }

  /** The input ended: the extractor says whether an entry is cut short, unless the end-of-archive block turns up first. */
  #finish(): Promise<void> {
    const finished = new Promise<void>((resolve) => this.#extract.end(resolve)); // a callback: called on 'finish'
    return Promise.race([finished, this.#endFound]);
  }

  async #entry(header: tar.Header, stream: Source): Promise<void> {
    const metaBytes = stream.offset - this.#next;
    const typeflag = this.#bytes(stream.offset + 156, 1)?.toString('latin1') ?? '?';
    const path = header.name;
    const size = header.size;
    // tar-stream reads no data after a folder's header, whatever size it claims.
    this.#next = stream.offset + BLOCK + (header.type === 'directory' ? 0 : Math.ceil(size / BLOCK) * BLOCK);
    this.#current = path;
    this.#kept = this.#kept.filter((chunk) => chunk.start + chunk.bytes.length > this.#next);
    if (metaBytes > MAX_META_BYTES) throw new TarFormatError('bad_header', `more than ${MAX_META_BYTES} bytes of extended headers`, path);
    if (metaBytes > 0) this.#hooks.meta?.(metaBytes);
    const type = (header.type as tar.Header['type'] | null) === null ? 'other' : TYPES[header.type];
    const sink = await this.#hooks.entry({ path, type, typeflag, size, mode: header.mode, linkpath: header.linkname ?? '' });
    if (header.type !== 'directory') for await (const chunk of stream) await sink?.write(chunk as Buffer);
    await sink?.close();
  }

  /** `length` bytes fed at `position`, when all of them are kept. */
  #bytes(position: number, length: number): Buffer | null {
    if (position + length > this.#fed) return null;
    const parts = this.#kept.filter((chunk) => chunk.start < position + length && chunk.start + chunk.bytes.length > position);
    if (parts.length === 0 || parts[0]!.start > position) return null;
    const joined = parts.length === 1 ? parts[0]!.bytes : Buffer.concat(parts.map((chunk) => chunk.bytes));
    const offset = position - parts[0]!.start;
    return joined.subarray(offset, offset + length);
  }
}

/** tar-stream's errors, in svc's words. */
function formatError(error: Error, entry: string | null): TarFormatError {
  if (error instanceof TarFormatError) return error;
  if (/unknown format/.test(error.message))
    return new TarFormatError('bad_header', 'a header block of an unknown format (neither ustar nor GNU tar)');
  if (/Invalid tar header/.test(error.message))
    return new TarFormatError('bad_header', 'a header block has a wrong checksum (not a tar archive, or a corrupt one)');
  if (/Unexpected end of data/.test(error.message)) {
    return entry === null
      ? new TarFormatError('truncated', 'the archive ends without its end-of-archive block (truncated?)')
      : new TarFormatError('truncated', `the archive ends inside entry ${JSON.stringify(entry)} (truncated?)`, entry);
  }
  return new TarFormatError('bad_header', `a malformed header (${error.message})`, entry);
}

/**
 * A streaming reader of tar archives (ustar, pax extended headers, GNU long
 * names): it is fed decompressed chunks and hands each entry's header to a
 * callback, which decides where the entry's data goes, before any of that
 * data is read. It judges nothing but the format; what is safe to extract is
 * the extractor's business.
 */
import type { BundleRule } from './types.js';

const BLOCK = 512;
/** Largest extended header (pax record set or GNU long name) accepted. */
const MAX_META_BYTES = 64 * 1024;
/** Extended headers allowed before the entry they describe. */
const MAX_META_RUN = 8;
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

export interface TarParserHooks {
  /** Called for every entry before its data; returns a sink, or null to skip the data. */
  entry(header: TarHeader): Promise<EntrySink | null>;
  /** Called for every extended header before it is read, with its declared size. */
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

type State = 'header' | 'data' | 'meta' | 'padding' | 'end';

interface Pending {
  path?: string;
  linkpath?: string;
  size?: number;
}

export class TarParser {
  readonly #hooks: TarParserHooks;
  #state: State = 'header';
  readonly #block = Buffer.alloc(BLOCK);
  #held = 0;
  #remaining = 0;
  #padding = 0;
  #sink: EntrySink | null = null;
  #entry = '';
  #meta: Buffer[] = [];
  #metaType = '';
  #metaRun = 0;
  #pending: Pending = {};
  #trailing = 0;

  constructor(hooks: TarParserHooks) {
    this.#hooks = hooks;
  }

  /** True once the end-of-archive block was read. */
  get ended(): boolean {
    return this.#state === 'end';
  }

  async write(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const available = chunk.length - offset;
      switch (this.#state) {
        case 'header': {
          const take = Math.min(BLOCK - this.#held, available);
          chunk.copy(this.#block, this.#held, offset, offset + take);
          this.#held += take;
          offset += take;
          if (this.#held === BLOCK) {
            this.#held = 0;
            await this.#header(this.#block);
          }
          break;
        }
        case 'data': {
          const take = Math.min(this.#remaining, available);
          if (this.#sink) await this.#sink.write(chunk.subarray(offset, offset + take));
          this.#remaining -= take;
          offset += take;
          if (this.#remaining === 0) await this.#endEntry();
          break;
        }
        case 'meta': {
          const take = Math.min(this.#remaining, available);
          this.#meta.push(Buffer.from(chunk.subarray(offset, offset + take)));
          this.#remaining -= take;
          offset += take;
          if (this.#remaining === 0) this.#endMeta();
          break;
        }
        case 'padding': {
          const take = Math.min(this.#padding, available);
          this.#padding -= take;
          offset += take;
          if (this.#padding === 0) this.#state = 'header';
          break;
        }
        case 'end': {
          this.#trailing += available;
          offset = chunk.length;
          if (this.#trailing > MAX_TRAILING_BYTES) {
            throw new TarFormatError('trailing_data', `it holds more than ${MAX_TRAILING_BYTES} bytes after the end of the archive`);
          }
          break;
        }
      }
    }
  }

  /** Called when the input ended: an archive must end with its end-of-archive block. */
  end(): void {
    if (this.#state === 'end') return;
    if (this.#state === 'data' || this.#state === 'meta' || this.#state === 'padding') {
      throw new TarFormatError('truncated', `the archive ends inside entry ${JSON.stringify(this.#entry)} (truncated?)`, this.#entry);
    }
    throw new TarFormatError('truncated', 'the archive ends without its end-of-archive block (truncated?)');
  }

  async #header(block: Buffer): Promise<void> {
    if (block.every((byte) => byte === 0)) {
      this.#state = 'end';
      return;
    }
    verifyChecksum(block);
    const typeflag = String.fromCharCode(block[156]!);
    const name = readString(block, 0, 100);
    const magic = block.subarray(257, 263).toString('latin1');
    const prefix = magic === 'ustar\0' ? readString(block, 345, 155) : '';
    const headerPath = prefix ? `${prefix}/${name}` : name;
    const size = readNumber(block, 124, 12, 'size', headerPath);

    if (typeflag === 'x' || typeflag === 'g' || typeflag === 'L' || typeflag === 'K') {
      if (++this.#metaRun > MAX_META_RUN) throw new TarFormatError('bad_header', `more than ${MAX_META_RUN} extended headers in a row`, headerPath);
      if (size > MAX_META_BYTES) throw new TarFormatError('bad_header', `an extended header of ${size} bytes (at most ${MAX_META_BYTES})`, headerPath);
      this.#hooks.meta?.(size);
      this.#entry = headerPath;
      this.#metaType = typeflag;
      this.#meta = [];
      this.#remaining = size;
      this.#padding = padding(size);
      if (size === 0) this.#endMeta();
      else this.#state = 'meta';
      return;
    }

    const pending = this.#pending;
    this.#pending = {};
    this.#metaRun = 0;
    const path = pending.path ?? headerPath;
    let type = entryType(typeflag);
    if (type === 'file' && typeflag !== '7' && path.endsWith('/')) type = 'directory'; // old tars mark folders by the slash
    const header: TarHeader = {
      path,
      type,
      typeflag,
      size: pending.size ?? size,
      mode: readNumber(block, 100, 8, 'mode', path),
      linkpath: pending.linkpath ?? readString(block, 157, 100),
    };
    this.#entry = path;
    this.#sink = await this.#hooks.entry(header);
    this.#remaining = header.size;
    this.#padding = padding(header.size);
    if (header.size === 0) await this.#endEntry();
    else this.#state = 'data';
  }

  async #endEntry(): Promise<void> {
    const sink = this.#sink;
    this.#sink = null;
    if (sink) await sink.close();
    this.#state = this.#padding > 0 ? 'padding' : 'header';
  }

  #endMeta(): void {
    const data = Buffer.concat(this.#meta);
    this.#meta = [];
    if (this.#metaType === 'x') Object.assign(this.#pending, parsePax(data, this.#entry));
    else if (this.#metaType === 'g') parsePax(data, this.#entry); // checked, not applied: no global value matters here
    else if (this.#metaType === 'L') this.#pending.path = readString(data, 0, data.length);
    else this.#pending.linkpath = readString(data, 0, data.length);
    this.#state = this.#padding > 0 ? 'padding' : 'header';
  }
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function entryType(typeflag: string): TarEntryType {
  switch (typeflag) {
    case '0':
    case '\0':
    case '7': // contiguous file: a regular file to everyone but a few old systems
      return 'file';
    case '1':
      return 'hardlink';
    case '2':
      return 'symlink';
    case '3':
      return 'character-device';
    case '4':
      return 'block-device';
    case '5':
      return 'directory';
    case '6':
      return 'fifo';
    default:
      return 'other';
  }
}

function verifyChecksum(block: Buffer): void {
  const field = block.subarray(148, 156).toString('latin1').replace(/[\0 ]+$/, '').replace(/^ +/, '');
  const stored = /^[0-7]+$/.test(field) ? parseInt(field, 8) : NaN;
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const byte = i >= 148 && i < 156 ? 0x20 : block[i]!;
    unsigned += byte;
    signed += byte > 127 ? byte - 256 : byte;
  }
  if (stored !== unsigned && stored !== signed) {
    throw new TarFormatError('bad_header', 'a header block has a wrong checksum (not a tar archive, or a corrupt one)');
  }
}

function readString(buffer: Buffer, start: number, length: number): string {
  const field = buffer.subarray(start, start + length);
  const nul = field.indexOf(0);
  return field.subarray(0, nul === -1 ? field.length : nul).toString('utf8');
}

/** An octal field, or a base-256 one (first byte 0x80) for values octal cannot hold. */
function readNumber(block: Buffer, start: number, length: number, what: string, entry: string | null): number {
  const field = block.subarray(start, start + length);
  if (field[0]! & 0x80) {
    if (field[0] === 0xff) throw new TarFormatError('bad_header', `a negative ${what}`, entry);
    let value = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    return value; // beyond 2^53 it is inexact, but far past every limit
  }
  const text = field.toString('latin1').replace(/[\0 ]+$/, '').replace(/^[ ]+/, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError('bad_header', `a ${what} field that is not a number (${JSON.stringify(text)})`, entry);
  return parseInt(text, 8);
}

/** Records `<length> <key>=<value>\n` of a pax extended header; only path, linkpath and size matter here. */
function parsePax(data: Buffer, entry: string): Pending {
  const result: Pending = {};
  let position = 0;
  while (position < data.length) {
    if (data[position] === 0) break; // some writers pad with NULs
    const space = data.indexOf(0x20, position);
    const length = space === -1 ? NaN : Number(data.subarray(position, space).toString('latin1'));
    if (!Number.isInteger(length) || length <= space - position || position + length > data.length || data[position + length - 1] !== 0x0a) {
      throw new TarFormatError('bad_header', 'a malformed pax extended header', entry);
    }
    const record = data.subarray(space + 1, position + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals === -1) throw new TarFormatError('bad_header', 'a malformed pax extended header', entry);
    const key = record.slice(0, equals);
    const value = record.slice(equals + 1);
    if (key === 'path') result.path = value;
    else if (key === 'linkpath') result.linkpath = value;
    else if (key === 'size') {
      if (!/^\d+$/.test(value)) throw new TarFormatError('bad_header', `a pax size that is not a number (${JSON.stringify(value)})`, entry);
      result.size = Number(value);
    }
    position += length;
  }
  return result;
}

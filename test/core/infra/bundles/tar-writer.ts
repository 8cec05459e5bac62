/**
 * A small tar writer for tests: it writes whatever it is told, including the
 * archive shapes that extraction must refuse. Header blocks by hand, on
 * purpose: a size that lies, an unknown type flag, GNU long-name blocks and a
 * folder with data are what a tar library (tar-stream included) will not
 * write. Well-formed archives in tests come from test/fixtures/tar-writer.ts.
 */
import { gzipSync } from 'node:zlib';

export interface TarEntrySpec {
  readonly name: string;
  /** Tar type flag: '0' file, '1' hard link, '2' symlink, '3' char device, '4' block device, '5' folder, '6' fifo, 'x' pax, 'L' GNU long name. */
  readonly type?: string;
  readonly data?: Buffer | string;
  /** Declared size when it differs from the data's (a lying header). */
  readonly size?: number;
  readonly linkname?: string;
  readonly mode?: number;
}

export function header(entry: TarEntrySpec): Buffer {
  const block = Buffer.alloc(512);
  const data = toBuffer(entry.data);
  const size = entry.size ?? data.length;
  block.write(entry.name, 0, 100, 'utf8');
  octal(block, 100, 8, entry.mode ?? 0o644);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, size);
  octal(block, 136, 12, 946684800);
  block.write(entry.type ?? '0', 156, 1, 'latin1');
  block.write(entry.linkname ?? '', 157, 100, 'utf8');
  block.write('ustar\u000000', 257, 8, 'latin1');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  return block;
}

/** Header, data and padding of one entry. */
export function entry(spec: TarEntrySpec): Buffer {
  const data = toBuffer(spec.data);
  return Buffer.concat([header(spec), data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
}

/** A pax extended header that sets `path` (and more) for the next entry. */
export function pax(records: Record<string, string>): Buffer {
  const body = Object.entries(records)
    .map(([key, value]) => {
      const text = ` ${key}=${value}\n`;
      let length = Buffer.byteLength(text) + 1;
      while (String(length).length + Buffer.byteLength(text) !== length) length++;
      return `${length}${text}`;
    })
    .join('');
  return entry({ name: 'PaxHeader', type: 'x', data: body });
}

/** The end-of-archive blocks. */
export const END = Buffer.alloc(1024);

export function tar(...parts: Array<TarEntrySpec | Buffer>): Buffer {
  return Buffer.concat([...parts.map((part) => (Buffer.isBuffer(part) ? part : entry(part))), END]);
}

export function tarGz(...parts: Array<TarEntrySpec | Buffer>): Buffer {
  return gzipSync(tar(...parts));
}

function octal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\u0000`, offset, length, 'latin1');
}

function toBuffer(data: Buffer | string | undefined): Buffer {
  if (data === undefined) return Buffer.alloc(0);
  return typeof data === 'string' ? Buffer.from(data) : data;
}

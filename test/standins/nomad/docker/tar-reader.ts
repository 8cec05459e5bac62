/** Reads the entries of a tar archive (ustar, GNU long names, pax `path`/`linkpath`/`size`). */

export interface TarEntry {
  readonly name: string;
  /** `0` file, `1` hard link, `2` symlink, `3`/`4` devices, `5` directory, `6` fifo. */
  readonly type: string;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly linkname: string;
  readonly data: Buffer;
}

function text(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString('utf8');
}

/** Octal, or GNU base-256 when the first byte has its high bit set. */
function number(block: Buffer, start: number, length: number): number {
  if (block[start]! & 0x80) {
    let value = block[start]! & 0x7f;
    for (let i = 1; i < length; i += 1) value = value * 256 + block[start + i]!;
    return value;
  }
  const digits = text(block, start, length).trim();
  return digits ? parseInt(digits, 8) : 0;
}

function paxRecords(data: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space < 0) break;
    const length = parseInt(data.subarray(offset, space).toString('utf8'), 10);
    if (!(length > 0)) break;
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records[record.slice(0, equals)] = record.slice(equals + 1);
    offset += length;
  }
  return records;
}

export function* readTar(archive: Buffer): Generator<TarEntry> {
  let offset = 0;
  let pax: Record<string, string> = {};
  let longName: string | null = null;
  let longLink: string | null = null;
  while (offset + 512 <= archive.length) {
    const block = archive.subarray(offset, offset + 512);
    if (block.every((byte) => byte === 0)) return;
    let size = number(block, 124, 12);
    const type = String.fromCharCode(block[156] || 0x30);
    if (type === 'x' || type === 'L' || type === 'K' || type === 'g') {
      const data = archive.subarray(offset + 512, offset + 512 + size);
      if (type === 'x') pax = paxRecords(data);
      if (type === 'L') longName = text(data, 0, data.length);
      if (type === 'K') longLink = text(data, 0, data.length);
      offset += 512 + Math.ceil(size / 512) * 512;
      continue;
    }
    if (pax.size) size = Number(pax.size);
    const ustarPrefix = text(block, 257, 6) === 'ustar' && block[262] === 0 ? text(block, 345, 155) : '';
    const name = pax.path ?? longName ?? (ustarPrefix ? `${ustarPrefix}/${text(block, 0, 100)}` : text(block, 0, 100));
    const linkname = pax.linkpath ?? longLink ?? text(block, 157, 100);
    const data = archive.subarray(offset + 512, offset + 512 + size);
    if (data.length < size) throw new Error(`tar: truncated entry ${name}`);
    yield { name, type: type === '\0' || type === '7' ? '0' : type, mode: number(block, 100, 8), uid: number(block, 108, 8), gid: number(block, 116, 8), linkname, data };
    offset += 512 + Math.ceil(size / 512) * 512;
    pax = {};
    longName = null;
    longLink = null;
  }
}

/**
 * `Range` on downloads (RFC 9110 §14): one range of bytes, so that an interrupted `svc volume get` goes on
 * where it stopped. The header is parsed by `range-parser` (the jshttp parser Express and `send` use). Several
 * ranges, or a malformed header, are ignored (the whole file, 200), as the RFC allows; an `If-Range` that does
 * not name the file's current entity tag asks for the whole file too (it changed since the first part came).
 */
import parseRange from 'range-parser';
import { SvcError } from '../../model/errors.js';
import type { PickBytes } from '../../services/volumes/files.js';

/** Which bytes a download with these `Range` and `If-Range` headers asks for; a header sent twice is ignored. */
export function pickByteRange(range: string | string[] | undefined, ifRange: string | string[] | undefined): PickBytes {
  return ({ size, etag }) => {
    if (typeof range !== 'string' || (ifRange !== undefined && ifRange !== etag)) return null;
    const ranges = parseRange(size, range, { combine: true });
    if (ranges === -2 || (Array.isArray(ranges) && (ranges.type !== 'bytes' || ranges.length !== 1))) return null;
    if (ranges === -1) {
      throw new SvcError('range_not_satisfiable', `the file has ${size} bytes; the Range ${JSON.stringify(range)} asks for none of them.`, {
        headers: { 'Content-Range': `bytes */${size}` },
        hint:
          size === 0 ? 'Ask without a Range: the file is empty.' : `Ask for bytes 0 to ${size - 1}, or without a Range for all of them.`,
      });
    }
    const [only] = ranges as parseRange.Ranges;
    return { start: only!.start, end: only!.end };
  };
}

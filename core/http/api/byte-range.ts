/**
 * `Range` on downloads (RFC 9110 §14): one range of bytes, so that an interrupted `svc volume get` goes on
 * where it stopped. The range itself is computed by `range-parser` (the jshttp parser Express and `send` use);
 * before it, the header must be one well-formed `bytes` range (the unit in any case). Anything else is
 * ignored and the whole file answered (200), as §14.2 asks of an unknown unit and allows for the rest:
 * several ranges, a malformed or invalid one (a last byte before the first), and an `If-Range` that does not
 * name the file's current entity tag (it changed since the first part came). A suffix longer than the file
 * is the whole file (§14.1.3); only a range that starts at or past the end is refused (416).
 */
import parseRange from 'range-parser';
import { SvcError } from '../../model/errors.js';
import type { PickBytes } from '../../infra/volumes/types.js';

/** `bytes=<first>-[<last>]` or `bytes=-<suffix length>`, the unit in any case. */
const ONE_BYTE_RANGE = /^bytes=(?:(\d+)-(\d*)|-(\d+))$/i;

/** Which bytes a download with these `Range` and `If-Range` headers asks for; a header sent twice is ignored. */
export function pickByteRange(range: string | string[] | undefined, ifRange: string | string[] | undefined): PickBytes {
  return ({ size, etag }) => {
    if (typeof range !== 'string' || (ifRange !== undefined && ifRange !== etag)) return null;
    const spec = ONE_BYTE_RANGE.exec(range.trim());
    if (spec === null) return null;
    const [, first, last, suffix] = spec;
    if (first !== undefined && last !== '' && Number(last) < Number(first)) return null; // invalid: ignored
    if (suffix !== undefined && Number(suffix) >= size && size > 0) return null; // all of it
    const ranges = parseRange(size, `bytes=${range.trim().slice('bytes='.length)}`);
    if (ranges === -1 || ranges === -2 || ranges.length !== 1) {
      throw new SvcError('range_not_satisfiable', `the file has ${size} bytes; the Range ${JSON.stringify(range)} asks for none of them.`, {
        headers: { 'Content-Range': `bytes */${size}` },
        hint:
          size === 0 ? 'Ask without a Range: the file is empty.' : `Ask for bytes 0 to ${size - 1}, or without a Range for all of them.`,
      });
    }
    const [only] = ranges;
    return { start: only!.start, end: only!.end };
  };
}

/**
 * What a state key may be, how keys sort, and the value size limit. Checked
 * before anything is queued or sent, so that the file store and a Consul KV
 * store refuse exactly the same input.
 */
import { SvcError } from '../../model/errors.js';
import { MAX_KEY_BYTES, MAX_VALUE_BYTES } from '../../model/store/types.js';

// C0 controls, DEL, and lone surrogates (they cannot round-trip through UTF-8).
const FORBIDDEN = /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Throws `state_key_invalid` unless `key` is a valid, non-empty key. */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw invalid(key, 'a key must not be empty');
  checkPrefix(key);
}

/** Like `checkKey`, but '' is allowed: it means every key. */
export function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string') throw invalid(prefix, 'a key must be a string');
  if (prefix.startsWith('/')) throw invalid(prefix, 'a key must not start with "/"');
  const segments = prefix.split('/');
  if (segments.includes('..') || segments.includes('.')) throw invalid(prefix, 'a key must not have a "." or ".." segment');
  // Consul's HTTP server cleans such paths, so a Consul KV store could not read the key back.
  if (segments.slice(0, -1).includes('')) throw invalid(prefix, 'a key must not have an empty segment ("//")');
  if (FORBIDDEN.test(prefix)) throw invalid(prefix, 'a key must not hold control characters or lone surrogates');
  const bytes = Buffer.byteLength(prefix, 'utf8');
  if (bytes > MAX_KEY_BYTES) throw invalid(prefix, `a key must be at most ${MAX_KEY_BYTES} bytes of UTF-8 (this one has ${bytes})`);
}

/** The value as bytes (strings as UTF-8), copied; throws `state_value_too_large` past the limit. */
export function valueBytes(key: string, value: Uint8Array | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
  if (bytes.length > MAX_VALUE_BYTES) {
    throw new SvcError(
      'state_value_too_large',
      `the value for state key ${JSON.stringify(key)} has ${bytes.length} bytes; the limit is ${MAX_VALUE_BYTES} (512 KiB)`,
      {
        hint: 'Store less per key, or keep large data elsewhere and store a reference to it.',
        details: { key, bytes: bytes.length, limit: MAX_VALUE_BYTES },
      },
    );
  }
  return bytes;
}

/** Throws `state_key_invalid` unless `cas` is absent or a non-negative safe integer. */
export function checkCas(key: string, cas: number | undefined): void {
  if (cas === undefined) return;
  if (!Number.isSafeInteger(cas) || cas < 0) throw invalid(key, `cas must be a non-negative integer, not ${String(cas)}`);
}

/**
 * Orders keys by their UTF-8 bytes, as Consul (Go) does. UTF-16 code unit
 * order differs only where surrogates (U+D800–U+DFFF, i.e. characters above
 * U+FFFF) meet U+E000–U+FFFF: in UTF-8 the former sort last.
 */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

function utf8Rank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** Consul's `?keys&separator=`: each key cut after the first separator past the prefix, without duplicates. */
export function foldKeys(sortedKeys: readonly string[], prefix: string, separator: string | undefined): string[] {
  if (separator === undefined || separator === '') return [...sortedKeys];
  const folded: string[] = [];
  for (const key of sortedKeys) {
    const at = key.indexOf(separator, prefix.length);
    const shown = at === -1 ? key : key.slice(0, at + separator.length);
    if (folded[folded.length - 1] !== shown) folded.push(shown);
  }
  return folded;
}

function invalid(key: unknown, reason: string): SvcError {
  const shown = typeof key === 'string' ? JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key) : String(key);
  return new SvcError('state_key_invalid', `invalid state key ${shown}: ${reason}`, { details: { reason } });
}

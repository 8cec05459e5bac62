/**
 * Image ids are content addresses: the same Python version and packages give
 * the same id on the SDK side and here, so the platform can check that a
 * manifest's ids were not edited or computed differently.
 */
import { createHash } from 'node:crypto';

/**
 * JSON with sorted keys and no spaces, byte for byte what Python's
 * `json.dumps(value, sort_keys=True, separators=(",", ":"))` writes — which
 * includes its default `ensure_ascii=True`: everything outside printable
 * ASCII becomes `\uXXXX`.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([key, child]) => [key, sortKeys(child)]));
  }
  return value;
}

/** `img-` + the first 16 hex digits of the SHA-256 of the canonical image JSON. */
export function imageIdFor(image: { python_version: string; python_packages: readonly string[] }): string {
  const canonical = canonicalJson({ python_packages: image.python_packages, python_version: image.python_version });
  return `img-${createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 16)}`;
}

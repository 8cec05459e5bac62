/**
 * Image ids are content addresses: the same Python version, packages,
 * requirements files and variables give the same id on the SDK side
 * (`image_id` in sdk/python/svc/manifest/_build.py) and here, so the platform
 * can check that a manifest's ids were not edited or computed differently.
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

/** What an image's id is computed from: the manifest's image without its `id`. */
export interface ImageIdFields {
  readonly python_version: string;
  readonly python_packages: readonly string[];
  readonly requirements_files?: readonly { readonly name: string; readonly content: string }[];
  readonly env?: Readonly<Record<string, string>>;
}

/** For messages: the fields the id of `image` covers (`python_version and python_packages`, `…, requirements_files and env`). */
export function idFieldsText(image: ImageIdFields): string {
  const fields = ['python_version', 'python_packages'];
  if ((image.requirements_files ?? []).length > 0) fields.push('requirements_files');
  if (Object.keys(image.env ?? {}).length > 0) fields.push('env');
  return `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)}`;
}

/**
 * `img-` + the first 16 hex digits of the SHA-256 of the canonical image JSON: its version and
 * packages, and its requirements files and variables only when it has some, so that an image
 * without them keeps the id it had before they existed.
 */
export function imageIdFor(image: ImageIdFields): string {
  const { requirements_files: files = [], env = {} } = image;
  const canonical = canonicalJson({
    python_packages: image.python_packages,
    python_version: image.python_version,
    ...(files.length > 0 ? { requirements_files: files.map(({ name, content }) => ({ content, name })) } : {}),
    ...(Object.keys(env).length > 0 ? { env } : {}),
  });
  return `img-${createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 16)}`;
}

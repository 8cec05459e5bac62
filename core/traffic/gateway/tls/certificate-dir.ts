/**
 * The per-host certificates of `tlsCertDir`: every `<name>.crt` beside a
 * `<name>.key` is one certificate, served for the host names it holds (so
 * the file names are free: `api.example.com`, `wildcard`, what an ACME client
 * writes). Other files are ignored, and so are hidden ones (`.name.crt`): tools
 * write a new file there before renaming it into place.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

export const CERT_SUFFIX = '.crt';
export const KEY_SUFFIX = '.key';

/** Each `<name>` with whichever of its two files is there. */
export type DirListing = ReadonlyMap<string, { readonly cert?: string; readonly key?: string }>;

/** The folder's certificate files by name; throws (with the code) when the folder cannot be read. */
export function listCertificateDir(dir: string): DirListing {
  const listing = new Map<string, { cert?: string; key?: string }>();
  for (const entry of readdirSync(dir).sort()) {
    if (entry.startsWith('.')) continue;
    const suffix = entry.endsWith(CERT_SUFFIX) ? 'cert' : entry.endsWith(KEY_SUFFIX) ? 'key' : null;
    if (suffix === null) continue;
    const name = entry.slice(0, -(suffix === 'cert' ? CERT_SUFFIX : KEY_SUFFIX).length);
    listing.set(name, { ...listing.get(name), [suffix]: path.join(dir, entry) });
  }
  return listing;
}

/** What is missing from a half pair, naming the file that is there. */
export function halfPairProblem(name: string, half: { readonly cert?: string; readonly key?: string }): string {
  return half.cert !== undefined
    ? `${half.cert} has no private key beside it (${name}${KEY_SUFFIX})`
    : `${half.key!} has no certificate beside it (${name}${CERT_SUFFIX})`;
}

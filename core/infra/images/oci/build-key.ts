import { createHash } from 'node:crypto';

/** Bump when the layout of svc's layers or config changes. */
export const BUILDER_VERSION = 2;

/** A short, stable digest of what a build (or a layer) is made from: equal inputs name the same cached result. */
export function buildHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 20);
}

/**
 * Repository names, tags and digests, and the routes of the /v2/ API.
 *
 * Names use the OCI distribution spec's regex (spec.md "Pulling manifests").
 * distribution's router also accepts a leading registry-domain component
 * (`Example.com:5000/foo`, docker/reference's NameRegexp); the stand-in
 * keeps to the spec. Tags: `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`. A path that
 * matches no route gets gorilla/mux's plain `404 page not found`, as
 * distribution's router answers (registry/api/v2/descriptors.go puts the
 * name, tag and digest patterns into the route paths).
 */
import { registryError } from './errors.js';

const COMPONENT = '[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*';
const NAME = `${COMPONENT}(?:/${COMPONENT})*`;
const TAG = '[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}';
/** go-digest's DigestRegexp: the shape a route accepts before `digest.Parse`. */
const DIGEST_SHAPE = '[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+';

export const NAME_PATTERN = new RegExp(`^${NAME}$`);
export const TAG_PATTERN = new RegExp(`^${TAG}$`);
const SHA256 = /^sha256:[a-f0-9]{64}$/;

/** reference.WithName: longer names are NAME_INVALID. */
export const NAME_MAX_LENGTH = 255;

export type Route =
  | { readonly kind: 'base' }
  | { readonly kind: 'tags'; readonly name: string }
  | { readonly kind: 'manifest'; readonly name: string; readonly reference: string }
  | { readonly kind: 'blob'; readonly name: string; readonly digest: string }
  | { readonly kind: 'uploads'; readonly name: string }
  | { readonly kind: 'upload'; readonly name: string; readonly uuid: string }
  /** gorilla/mux StrictSlash: the path without its trailing slash redirects to it. */
  | { readonly kind: 'slash'; readonly location: string };

/** Routes in distribution's registration order (routeDescriptors). */
const ROUTES: readonly [RegExp, (m: RegExpExecArray) => Route][] = [
  [/^\/v2\/$/, () => ({ kind: 'base' })],
  [new RegExp(`^/v2/(${NAME})/manifests/(${TAG}|${DIGEST_SHAPE})$`), (m) => ({ kind: 'manifest', name: m[1]!, reference: m[2]! })],
  [new RegExp(`^/v2/(${NAME})/tags/list$`), (m) => ({ kind: 'tags', name: m[1]! })],
  [new RegExp(`^/v2/(${NAME})/blobs/(${DIGEST_SHAPE})$`), (m) => ({ kind: 'blob', name: m[1]!, digest: m[2]! })],
  [new RegExp(`^/v2/(${NAME})/blobs/uploads/$`), (m) => ({ kind: 'uploads', name: m[1]! })],
  [new RegExp(`^/v2/(${NAME})/blobs/uploads/([a-zA-Z0-9-_.=]+)$`), (m) => ({ kind: 'upload', name: m[1]!, uuid: m[2]! })],
  [/^\/v2$/, () => ({ kind: 'slash', location: '/v2/' })],
  [new RegExp(`^/v2/(${NAME})/blobs/uploads$`), (m) => ({ kind: 'slash', location: `/v2/${m[1]!}/blobs/uploads/` })],
];

export function matchRoute(path: string): Route | undefined {
  for (const [pattern, build] of ROUTES) {
    const match = pattern.exec(path);
    if (match !== null) return build(match);
  }
  return undefined;
}

/** The length check reference.WithName does after routing (NAME_INVALID, 400). */
export function checkNameLength(name: string): void {
  if (name.length > NAME_MAX_LENGTH) {
    throw registryError('NAME_INVALID', { Name: name, Reason: `repository name must not be more than ${NAME_MAX_LENGTH} characters` });
  }
}

export function isDigestShaped(reference: string): boolean {
  return reference.includes(':');
}

/**
 * `digest.Parse`, limited to sha256: other algorithms and malformed
 * digests are DIGEST_INVALID (400), as the spec asks for an invalid or
 * unsupported client digest.
 */
export function parseDigest(value: string | null | undefined, missingDetail = 'digest missing'): string {
  if (value === null || value === undefined || value === '') throw registryError('DIGEST_INVALID', missingDetail);
  if (!SHA256.test(value)) {
    const algorithm = value.split(':')[0] ?? '';
    throw registryError(
      'DIGEST_INVALID',
      algorithm === 'sha256' ? 'invalid checksum digest format' : `unsupported digest algorithm: ${algorithm}`,
    );
  }
  return value;
}

export function isValidDigest(value: unknown): value is string {
  return typeof value === 'string' && SHA256.test(value);
}

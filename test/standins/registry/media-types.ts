/** The manifest media types the registry stand-in knows (distribution's registered schemas). */
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';

export const IMAGE_MANIFEST_TYPES: readonly string[] = [OCI_MANIFEST, DOCKER_MANIFEST];
export const INDEX_TYPES: readonly string[] = [OCI_INDEX, DOCKER_MANIFEST_LIST];

/** Layer types a manifest may point elsewhere for (`urls`), so their blobs need not be in the registry. */
export const FOREIGN_LAYER_TYPES: readonly string[] = [
  'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
  'application/vnd.oci.image.layer.nondistributable.v1.tar',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip',
];

/**
 * Go's mime.ParseMediaType, reduced to what is needed: the lower-cased
 * type without parameters, or `undefined` when it is not `type/subtype`.
 */
export function parseMediaType(value: string): string | undefined {
  const type = (value.split(';')[0] ?? '').trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : undefined;
}

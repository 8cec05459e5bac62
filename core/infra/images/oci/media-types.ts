/**
 * The manifest and blob media types of the OCI image spec and of Docker's
 * image manifest v2 schema 2, which registries and Nomad's docker driver
 * (through dockerd) both understand.
 */
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_CONFIG = 'application/vnd.oci.image.config.v1+json';
export const OCI_LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';

export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
export const DOCKER_CONFIG = 'application/vnd.docker.container.image.v1+json';
export const DOCKER_LAYER_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

/** What svc asks a registry for when it reads a base image: an image manifest or a multi-platform index. */
export const MANIFEST_ACCEPT = [OCI_INDEX, OCI_MANIFEST, DOCKER_MANIFEST_LIST, DOCKER_MANIFEST].join(', ');

export type ManifestFormat = 'oci' | 'docker';

/** The media types an image of one format uses for its manifest, config and gzip'd layers. */
export function formatTypes(format: ManifestFormat): { manifest: string; config: string; layer: string } {
  return format === 'oci'
    ? { manifest: OCI_MANIFEST, config: OCI_CONFIG, layer: OCI_LAYER_GZIP }
    : { manifest: DOCKER_MANIFEST, config: DOCKER_CONFIG, layer: DOCKER_LAYER_GZIP };
}

export function isIndex(mediaType: string): boolean {
  return mediaType === OCI_INDEX || mediaType === DOCKER_MANIFEST_LIST;
}

export function isImageManifest(mediaType: string): boolean {
  return mediaType === OCI_MANIFEST || mediaType === DOCKER_MANIFEST;
}

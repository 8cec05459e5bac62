/** Where the docker driver stand-in gets images from: a registry (the default) or an OCI layout folder (tests). */

/** The parts of an OCI image config (image-spec config.md) the driver reads. */
export interface OciImageConfig {
  readonly architecture?: string;
  readonly os?: string;
  readonly config?: {
    readonly Env?: readonly string[];
    readonly Entrypoint?: readonly string[] | null;
    readonly Cmd?: readonly string[] | null;
    readonly WorkingDir?: string;
    readonly User?: string;
  };
  readonly rootfs?: { readonly type: string; readonly diff_ids: readonly string[] };
}

export interface RegistryAuth {
  readonly username: string;
  readonly password: string;
}

export interface PulledImage {
  /** Paths of the gzip'd layer tars, base layer first. */
  readonly layers: readonly string[];
  readonly config: OciImageConfig;
}

export interface ImageSource {
  pull(image: string, auth?: RegistryAuth): Promise<PulledImage>;
}

export const MEDIA_TYPES = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
} as const;

export function isIndex(mediaType: string | undefined): boolean {
  return mediaType === MEDIA_TYPES.ociIndex || mediaType === MEDIA_TYPES.dockerList;
}

/** The linux/amd64 entry of an image index, as `docker pull` on this machine would choose. */
export function pickPlatform(index: { manifests?: Array<{ digest: string; platform?: { os?: string; architecture?: string } }> }): string {
  const entry = (index.manifests ?? []).find((m) => m.platform?.os === 'linux' && m.platform?.architecture === 'amd64');
  if (!entry) throw new Error('no matching manifest for linux/amd64 in the manifest list entries');
  return entry.digest;
}

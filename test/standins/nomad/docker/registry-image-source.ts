/**
 * Pulls images over HTTP as the OCI distribution spec describes (GET /v2/<repo>/manifests/<ref>,
 * GET /v2/<repo>/blobs/<digest>, redirects followed), choosing linux/amd64 from an index, verifying
 * every digest and answering 401 challenges; verified blobs are cached in a BlobStore.
 */
import { readFileSync } from 'node:fs';
import { BlobStore, verifyDigest } from './blob-store.js';
import { parseImageReference, registryBaseUrl } from './image-reference.js';
import {
  isIndex,
  MEDIA_TYPES,
  pickPlatform,
  type ImageSource,
  type OciImageConfig,
  type PulledImage,
  type RegistryAuth,
} from './image-source.js';
import { answerChallenge, parseChallenge } from './registry-token.js';

const MANIFEST_ACCEPT = [MEDIA_TYPES.ociManifest, MEDIA_TYPES.ociIndex, MEDIA_TYPES.dockerManifest, MEDIA_TYPES.dockerList].join(', ');

/** One pull: remembers the Authorization header once a challenge was answered. */
class PullSession {
  private authorization: string | null = null;

  constructor(
    private readonly base: string,
    private readonly auth: RegistryAuth | undefined,
  ) {}

  async get(path: string, accept?: string): Promise<Response> {
    const request = () =>
      fetch(this.base + path, {
        redirect: 'follow',
        headers: { ...(accept ? { Accept: accept } : {}), ...(this.authorization ? { Authorization: this.authorization } : {}) },
      });
    let response = await request();
    if (response.status === 401 && this.authorization === null) {
      const header = response.headers.get('www-authenticate');
      await response.body?.cancel();
      if (!header) throw new Error('unauthorized: 401 without WWW-Authenticate');
      this.authorization = await answerChallenge(parseChallenge(header), this.auth);
      response = await request();
    }
    if (!response.ok) throw new Error(await registryError(response));
    return response;
  }
}

/** The registry's error text (`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`), as docker prints it. */
async function registryError(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const first = (JSON.parse(text) as { errors?: Array<{ code?: string; message?: string }> }).errors?.[0];
    if (first) return `${first.message ?? first.code} (HTTP ${response.status})`;
  } catch {
    // not a registry error body
  }
  return `unexpected status ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
}

export class RegistryImageSource implements ImageSource {
  private readonly blobs: BlobStore;

  constructor(cacheDir: string) {
    this.blobs = new BlobStore(cacheDir);
  }

  async pull(image: string, auth?: RegistryAuth): Promise<PulledImage> {
    const ref = parseImageReference(image);
    const session = new PullSession(registryBaseUrl(ref), auth);
    let manifest = await this.manifest(session, ref.digest ?? ref.tag, ref.digest);
    if (isIndex(manifest.mediaType)) {
      const digest = pickPlatform(manifest);
      manifest = await this.manifest(session, digest, digest);
    }
    if (
      manifest.mediaType !== undefined &&
      manifest.mediaType !== MEDIA_TYPES.ociManifest &&
      manifest.mediaType !== MEDIA_TYPES.dockerManifest
    ) {
      throw new Error(`unsupported manifest media type ${manifest.mediaType}`);
    }
    const configFile = await this.blob(session, manifest.config.digest);
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as OciImageConfig;
    const layers: string[] = [];
    for (const layer of manifest.layers as Array<{ digest: string; mediaType: string }>) {
      if (!/tar\+gzip$|tar\.gzip$/.test(layer.mediaType)) throw new Error(`unsupported layer media type ${layer.mediaType}`);
      layers.push(await this.blob(session, layer.digest));
    }
    return { config, layers };
  }

  /** A manifest by tag or digest; verified against the digest asked for, or the registry's Docker-Content-Digest. */
  private async manifest(session: PullSession, reference: string, expected: string | null): Promise<any> {
    const response = await session.get(`/manifests/${reference}`, MANIFEST_ACCEPT);
    const bytes = Buffer.from(await response.arrayBuffer());
    const digest = expected ?? response.headers.get('docker-content-digest');
    if (digest) verifyDigest(digest, bytes);
    const manifest = JSON.parse(bytes.toString('utf8'));
    return { ...manifest, mediaType: manifest.mediaType ?? response.headers.get('content-type')?.split(';')[0] };
  }

  private async blob(session: PullSession, digest: string): Promise<string> {
    if (this.blobs.has(digest)) return this.blobs.path(digest);
    const response = await session.get(`/blobs/${digest}`);
    return this.blobs.put(digest, Buffer.from(await response.arrayBuffer()));
  }
}

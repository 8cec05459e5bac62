/**
 * An in-process stand-in for a container registry (OCI distribution spec
 * v1.1 / Docker Registry HTTP API V2, as distribution/distribution serves
 * it) for the parts an image builder and a puller use: blob uploads
 * (monolithic, chunked, cross-repository mounts), blob and manifest pulls
 * with Accept handling, manifest pushes with reference checks, tag lists,
 * and token or Basic authentication. Everything lives in memory. See
 * test/standins/README.md ("Registry") and test/standins/registry.test.ts.
 */
import type { AddressInfo } from 'node:net';
import { Authenticator, type AuthOptions } from './auth.js';
import { BlobHandler } from './blobs.js';
import type { RegistryContext, RegistryStats } from './context.js';
import { importLayout } from './layout.js';
import { ManifestHandler } from './manifests.js';
import { createRegistryServer } from './server.js';
import { RegistryStore } from './store.js';
import { UploadHandler } from './uploads.js';

export interface RegistryStandinOptions {
  /** Authentication like Docker Hub / distribution's token auth, or HTTP Basic, or none (default). */
  readonly auth?: AuthOptions;
  /** GET of a blob answers 307 to another path that serves the bytes (as Docker Hub redirects to its CDN), default false. */
  readonly redirectBlobs?: boolean;
  /** Location headers as absolute URLs instead of paths (distribution's default; default false: paths). */
  readonly absoluteLocations?: boolean;
  /** A manifest descriptor's `size` must match its content (stricter than distribution; default true). */
  readonly strictDescriptorSizes?: boolean;
}

export interface RegistryStandin {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `127.0.0.1:<port>` (what image references start with) */
  readonly host: string;
  /** Counters tests read. */
  readonly stats: RegistryStats;
  /** Seeds an image from an OCI image layout folder into `repo:tag`, as `skopeo copy --all oci:dir docker://…` would. */
  importLayout(layoutDir: string, repo: string, tag: string): Promise<void>;
  /** Seeds directly: blobs and one manifest (bytes and content type as given, not checked). Returns the manifest digest. */
  putImage(repo: string, tag: string, image: { blobs: Buffer[]; manifest: Buffer; mediaType: string }): string;
  close(): Promise<void>;
}

export type { AuthOptions } from './auth.js';
export { TOKEN_SERVICE } from './auth.js';

export async function startRegistryStandin(options: RegistryStandinOptions = {}): Promise<RegistryStandin> {
  let url = '';
  const store = new RegistryStore();
  const stats: RegistryStats = { uploads: 0, mounts: 0, blobGets: 0, manifestPuts: 0 };
  const context: RegistryContext = {
    store,
    stats,
    baseUrl: () => url,
    absoluteLocations: options.absoluteLocations ?? false,
    redirectBlobs: options.redirectBlobs ?? false,
    strictDescriptorSizes: options.strictDescriptorSizes ?? true,
  };
  const server = createRegistryServer({
    context,
    auth: new Authenticator(options.auth, () => `${url}/token`),
    blobs: new BlobHandler(context),
    uploads: new UploadHandler(context),
    manifests: new ManifestHandler(context),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;

  return {
    url,
    host: `127.0.0.1:${port}`,
    stats,
    importLayout: (layoutDir, repo, tag) => importLayout(store, layoutDir, repo, tag),
    putImage(repo, tag, image) {
      for (const blob of image.blobs) store.putBlob(repo, blob);
      return store.putManifest(repo, image.manifest, image.mediaType, tag);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

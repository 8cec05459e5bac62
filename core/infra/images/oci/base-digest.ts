/**
 * Which base image a build uses: the digest its tag names now, so that a tag
 * pushed again (a security fix upstream, a new system library in your own
 * base) gives new images. When the base's registry cannot be reached, the
 * digest the tag had last time is used, so deploys of images already built
 * do not depend on Docker Hub being up; a base that is gone (404) or refused
 * (401) stays an error.
 */
import { SvcError } from '../../../model/errors.js';
import type { BuildLog } from '../types.js';
import { MANIFEST_ACCEPT } from './media-types.js';
import type { PersistedMap } from './persisted-map.js';
import type { ImageReference } from './reference.js';
import type { RegistryClient } from './registry-client.js';

export async function currentBaseDigest(
  client: RegistryClient,
  reference: ImageReference,
  name: string,
  lastSeen: PersistedMap,
  log: BuildLog,
): Promise<string> {
  if (reference.digest !== null) return reference.digest;
  try {
    const digest = await client.manifestDigest(reference.repository, reference.tag!, MANIFEST_ACCEPT);
    await lastSeen.set(name, digest);
    return digest;
  } catch (error) {
    const status = error instanceof SvcError ? (error.details as { status?: number } | undefined)?.status : undefined;
    const remembered = status === undefined || status >= 500 ? await lastSeen.get(name) : undefined;
    if (remembered === undefined) throw error;
    log(`could not read the base image ${name} now (${(error as Error).message}); using the digest its tag had last time, ${remembered}`);
    return remembered;
  }
}

/**
 * What every handler of the registry stand-in is given: the request, the
 * shared state, the switches, and how Location values are written.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RegistryStore } from './store.js';

export interface RegistryStats {
  /** Completed blob uploads whose bytes were received (monolithic POST or closing PUT). */
  uploads: number;
  /** Successful cross-repository mounts (201). */
  mounts: number;
  /** GETs of /v2/<name>/blobs/<digest> answered 200/206 or redirected. */
  blobGets: number;
  /** Manifests accepted by PUT. */
  manifestPuts: number;
}

export interface RegistryContext {
  readonly store: RegistryStore;
  readonly stats: RegistryStats;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: () => string;
  readonly absoluteLocations: boolean;
  readonly redirectBlobs: boolean;
  readonly strictDescriptorSizes: boolean;
}

export interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  readonly query: URLSearchParams;
}

/** A Location value: a path by default (distribution's `relativeurls: true`), absolute when asked. */
export function locationOf(context: RegistryContext, pathAndQuery: string): string {
  return context.absoluteLocations ? `${context.baseUrl()}${pathAndQuery}` : pathAndQuery;
}

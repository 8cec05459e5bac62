/**
 * Which workspace uploaded which bundle: `bundles/<workspace>/<sha256>` on
 * the state store. Bundle files are shared (content-addressed, stored once),
 * but a workspace sees and deploys only the bundles it uploaded itself, so
 * knowing a sha256 tells nothing about, and gives no access to, another
 * workspace's code.
 */
import { putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import type { BundleUploads } from './types.js';

export interface WorkspaceBundleRecord {
  readonly sha256: string;
  readonly size: number;
  readonly uploadedAt: string;
}

const bundleKey = (workspace: string, sha256: string) => `bundles/${workspace}/${sha256}`;

export class WorkspaceBundles {
  readonly #store: StateStore;
  readonly #files: BundleUploads['store'];

  constructor(store: StateStore, files: BundleUploads['store']) {
    this.#store = store;
    this.#files = files;
  }

  /** True when the workspace uploaded the bundle and its file is still stored. */
  async has(workspace: string, sha256: string): Promise<boolean> {
    this.#files.pathOf(sha256); // bad_request unless a sha256: nothing else reaches a state key
    return (await this.#store.get(bundleKey(workspace, sha256))) !== null && (await this.#files.has(sha256));
  }

  /** Records the upload; false when the workspace had it already (the first record is kept). */
  add(workspace: string, sha256: string, size: number): Promise<boolean> {
    const record: WorkspaceBundleRecord = { sha256, size, uploadedAt: new Date().toISOString() };
    return putJson(this.#store, bundleKey(workspace, sha256), record, { cas: 0 });
  }
}

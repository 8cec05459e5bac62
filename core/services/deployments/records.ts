/**
 * The durable side of deployed apps, on the state store (docs/state.md has
 * the key table):
 *
 *   apps/<workspace>/<app>                    AppRecord: paused or not
 *   deployments/<workspace>/<app>/<workload>  DeploymentRecord: status and the last versions
 *   app-apis/<workspace>/<app>/<workload>     ApiCapture: an ASGI app's OpenAPI description, read at its deploy
 *
 * Only stage `deployed` is recorded; previews live and die with `svc serve`.
 * Every change is a compare-and-set loop on the key's modify index, so two
 * writers (two deploys, or one deploy and a pause) never lose each other's update.
 */
import type { ApiCapture } from '../app-api/types.js';
import { scheduleAppPrefix } from '../../model/schedule-keys.js';
import { SvcError } from '../../model/errors.js';
import { getJson, putJson, type JsonValidator } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import type { Workload } from '../../model/workload/types.js';
import type { ScaleOverride } from './scale-by-hand.js';

/** How many versions a deployment record keeps; older ones are dropped (their bundles stay in the store). */
export const KEPT_VERSIONS = 10;

export interface AppRecord {
  readonly name: string;
  readonly workspace: string;
  /** Paused: every workload is down and answers `app_paused`; a deploy or resume clears it. */
  readonly paused: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export type DeploymentStatus = 'running' | 'stopped';

/** One deploy of one workload: everything a restart needs to run it again. */
export interface VersionRecord {
  readonly version: number;
  /** The code bundle in `<data dir>/bundles`; null when the platform ran a project folder (no bundles). */
  readonly bundleSha256: string | null;
  /** The project folder the code ran from when there is no bundle. */
  readonly sourceRoot: string;
  /** The module the runtime imports (`app`). */
  readonly entry: string;
  /** The SDK version the manifest was written by. */
  readonly sdkVersion: string;
  /** The resolved workload, its image spec included. */
  readonly workload: Workload;
  readonly createdAt: string;
  /** The principal's subject (`owner`, a user); null for the platform itself. */
  readonly createdBy: string | null;
}

export interface DeploymentRecord {
  readonly app: string;
  readonly workload: string;
  readonly status: DeploymentStatus;
  readonly currentVersion: number;
  /** Newest last; at most KEPT_VERSIONS. */
  readonly versions: readonly VersionRecord[];
  /** Scaling bounds set by hand since the last deploy (`svc deployment scale`); absent: the code's. */
  readonly scaleOverride?: ScaleOverride;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What a deploy records for one workload; the version number is assigned when it is written. */
export type NewVersion = Omit<VersionRecord, 'version' | 'createdAt'>;

export const appKey = (workspace: string, app: string) => `apps/${workspace}/${app}`;
export const deploymentKey = (workspace: string, app: string, workload: string) => `deployments/${workspace}/${app}/${workload}`;
const deploymentPrefix = (workspace: string, app: string) => `deployments/${workspace}/${app}/`;
/** Its own key, not in the version record: a description may take most of a state value (MAX_OPENAPI_BYTES). */
export const apiKey = (workspace: string, app: string, workload: string) => `app-apis/${workspace}/${app}/${workload}`;
const apiPrefix = (workspace: string, app: string) => `app-apis/${workspace}/${app}/`;

/** The version a record currently runs (or would run, when stopped). */
export function currentVersion(record: DeploymentRecord): VersionRecord {
  return record.versions.find((v) => v.version === record.currentVersion) ?? record.versions[record.versions.length - 1]!;
}

export class DeploymentRecords {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  async app(workspace: string, app: string): Promise<AppRecord | null> {
    return (await getJson(this.#store, appKey(workspace, app), appRecord))?.value ?? null;
  }

  /** The apps of a workspace, or of every workspace when `workspace` is undefined. */
  async apps(workspace?: string): Promise<AppRecord[]> {
    const entries = await this.#store.list(workspace === undefined ? 'apps/' : `apps/${workspace}/`);
    return entries.map((entry) => appRecord(parse(entry.key, entry.value), entry.key));
  }

  async deployments(workspace: string, app: string): Promise<DeploymentRecord[]> {
    const entries = await this.#store.list(deploymentPrefix(workspace, app));
    return entries.map((entry) => deploymentRecord(parse(entry.key, entry.value), entry.key));
  }

  /**
   * Records a deploy: a new version for each workload (numbered after the
   * newest recorded, whatever another writer added meanwhile), status
   * `running`, and the app unpaused. Returns the version numbers by workload.
   */
  async addVersions(workspace: string, app: string, versions: readonly NewVersion[]): Promise<Map<string, number>> {
    const now = new Date().toISOString();
    await this.#update(appKey(workspace, app), appRecord, (current) => ({
      name: app,
      workspace,
      paused: false,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
    }));
    const numbers = new Map<string, number>();
    // One key per workload: each is its own compare-and-set, in parallel.
    await Promise.all(
      versions.map(async (added) => {
        const written = await this.#update(deploymentKey(workspace, app, added.workload.name), deploymentRecord, (current) => {
          const version = (current?.versions.at(-1)?.version ?? 0) + 1;
          const kept = [...(current?.versions ?? []), { ...added, version, createdAt: now }].slice(-KEPT_VERSIONS);
          return {
            app,
            workload: added.workload.name,
            status: 'running' as const,
            currentVersion: version,
            versions: kept,
            createdAt: current?.createdAt ?? now,
            updatedAt: now,
          };
        });
        numbers.set(added.workload.name, written!.currentVersion);
      }),
    );
    return numbers;
  }

  async setPaused(workspace: string, app: string, paused: boolean): Promise<void> {
    await this.#update(appKey(workspace, app), appRecord, (current) => {
      if (current === null) throw notFound(`no app ${app} in workspace ${workspace}.`);
      return { ...current, paused, updatedAt: new Date().toISOString() };
    });
  }

  async setStatus(workspace: string, app: string, workload: string, status: DeploymentStatus): Promise<void> {
    await this.#update(deploymentKey(workspace, app, workload), deploymentRecord, (current) => {
      if (current === null) throw notFound(`no deployment ${app}/${workload} in workspace ${workspace}.`);
      return { ...current, status, updatedAt: new Date().toISOString() };
    });
  }

  /** Scaling bounds set by hand (`svc deployment scale`); the next deploy writes a record without them. */
  async setScaleOverride(workspace: string, app: string, workload: string, override: ScaleOverride): Promise<void> {
    await this.#update(deploymentKey(workspace, app, workload), deploymentRecord, (current) => {
      if (current === null) throw notFound(`no deployment ${app}/${workload} in workspace ${workspace}.`);
      return { ...current, scaleOverride: override, updatedAt: new Date().toISOString() };
    });
  }

  /** A rollback: the workload runs `version` (one it keeps) again; the next deploy is numbered after the newest. */
  async setCurrentVersion(workspace: string, app: string, workload: string, version: number): Promise<void> {
    await this.#update(deploymentKey(workspace, app, workload), deploymentRecord, (current) => {
      if (current === null || !current.versions.some((v) => v.version === version)) {
        throw notFound(`no version ${version} of ${app}/${workload} in workspace ${workspace}.`);
      }
      // Bounds set by hand were for the version it ran: the one it goes back to has its own.
      const { scaleOverride: _dropped, ...kept } = current;
      return { ...kept, currentVersion: version, updatedAt: new Date().toISOString() };
    });
  }

  async deleteDeployment(workspace: string, app: string, workload: string): Promise<void> {
    await this.#store.delete(deploymentKey(workspace, app, workload));
    await this.#store.delete(apiKey(workspace, app, workload));
  }

  /** The OpenAPI descriptions of the app's ASGI workloads, by workload (each of the version it was read from). */
  async apis(workspace: string, app: string): Promise<Map<string, ApiCapture>> {
    const entries = await this.#store.list(apiPrefix(workspace, app));
    return new Map(
      entries.map((entry) => [entry.key.slice(apiPrefix(workspace, app).length), apiCapture(parse(entry.key, entry.value), entry.key)]),
    );
  }

  /** Keeps the description read at a workload's deploy; null forgets the one kept (the new version has none). */
  async setApi(workspace: string, app: string, workload: string, capture: ApiCapture | null): Promise<void> {
    if (capture === null) await this.#store.delete(apiKey(workspace, app, workload));
    else await putJson(this.#store, apiKey(workspace, app, workload), capture);
  }

  /** The app and all its deployments. */
  async deleteApp(workspace: string, app: string): Promise<void> {
    await this.#store.deleteTree(deploymentPrefix(workspace, app));
    await this.#store.deleteTree(scheduleAppPrefix(workspace, app));
    await this.#store.deleteTree(apiPrefix(workspace, app));
    await this.#store.delete(appKey(workspace, app));
  }

  /** Read, change, compare-and-set; again from the read when another writer came first. */
  async #update<T>(key: string, validate: JsonValidator<T>, change: (current: T | null) => T): Promise<T> {
    for (;;) {
      const entry = await getJson(this.#store, key, validate);
      const next = change(entry?.value ?? null);
      if (await putJson(this.#store, key, next, { cas: entry?.modifyIndex ?? 0 })) return next;
    }
  }
}

function notFound(message: string): SvcError {
  return new SvcError('not_found', message);
}

function parse(key: string, value: Buffer): unknown {
  try {
    return JSON.parse(value.toString('utf8'));
  } catch (error) {
    throw new SvcError('state_corrupt', `the state value of ${JSON.stringify(key)} is not valid JSON (${(error as Error).message})`, {
      details: { key },
      cause: error,
    });
  }
}

/** Our own writes: a light check that catches a value from another svc version or a hand edit. */
function shaped<T>(required: readonly string[]): JsonValidator<T> {
  return (value, key) => {
    const object = value as Record<string, unknown> | null;
    const missing = typeof object === 'object' && object !== null ? required.filter((field) => !(field in object)) : required;
    if (missing.length > 0)
      throw new SvcError('state_corrupt', `the state value of ${JSON.stringify(key)} lacks ${missing.join(', ')}`, { details: { key } });
    return value as T;
  };
}

const appRecord = shaped<AppRecord>(['name', 'workspace', 'paused']);
const deploymentShape = shaped<DeploymentRecord>(['app', 'workload', 'status', 'currentVersion', 'versions']);

/** A record written before images had `requirementsFiles` and `env` reads as an image with none. */
const deploymentRecord: JsonValidator<DeploymentRecord> = (value, key) => {
  const record = deploymentShape(value, key);
  const versions = Array.isArray(record.versions) ? record.versions : [];
  return {
    ...record,
    versions: versions.map((version) => {
      const image = version.workload?.image;
      if (image === undefined || (image.requirementsFiles !== undefined && image.env !== undefined)) return version;
      return {
        ...version,
        workload: { ...version.workload, image: { ...image, requirementsFiles: image.requirementsFiles ?? [], env: image.env ?? {} } },
      };
    }),
  };
};
const apiCapture = shaped<ApiCapture>(['version', 'source', 'capturedAt', 'document']);

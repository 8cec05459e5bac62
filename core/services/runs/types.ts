/** Remote runs and previews: ephemeral deployments that live while a client uses them. */
import type { Readable } from 'node:stream';
import type { SvcError } from '../../model/errors.js';
import type { ClassParameterValues } from '../../model/workload/class-parameters.js';
import type { Workload } from '../../model/workload/types.js';
import type { DeploymentLogKey } from '../../infra/logs/deployment-logs.js';

/**
 * - `building`: the function's image is being built (the first run of an image waits here);
 * - `starting`: its first container is starting;
 * - `ready`: calls go to its containers;
 * - `failed`: the build or the start failed; calls get that error (`failure`).
 * An ended run (by its client, or idle) is gone: the API answers 404.
 */
export type RunStatus = 'building' | 'starting' | 'ready' | 'failed';

/** What a run id looks like (runs.ts makes them): `run-` and 16 hex digits. */
export const RUN_ID_SOURCE = 'run-[0-9a-f]{16}';

export interface RunView {
  /** `run-<16 hex>`: unguessable, unique in the server. */
  readonly id: string;
  readonly app: string;
  readonly function: string;
  readonly status: RunStatus;
  /** Why it failed (`image_build_failed`, `container_failed`, …); null unless `failed`. */
  readonly failure: { readonly code: string; readonly message: string } | null;
  readonly calls: { readonly inFlight: number; readonly completed: number };
  readonly idleTimeoutSeconds: number;
  /** When the run ends if nobody uses it from now on. */
  readonly expiresAt: string;
  readonly createdAt: string;
  /** A run of an `@app.cls` class: the values of its parameters (defaults filled in); absent for a function. */
  readonly parameters?: ClassParameterValues;
}

/** The container's answer to one call: NDJSON frames (log lines, then one result or error), streamed. */
export interface CallAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readable;
}

/** How one call waits; a map's inputs (core/services/maps) wait otherwise than a `.remote()`. */
export interface CallOptions {
  /** Calls that may wait (for the start, then for a slot) before one more gets 429 `queue_full`; else the function's `max_pending_tasks`. */
  readonly maxPending?: number;
  /** False: a call waiting for a slot waits as long as it takes, not the gateway's queue timeout (admission.ts). */
  readonly waitTimeout?: boolean;
  /**
   * How the body is encoded: the pickled call (the default) or `application/json`, a JSON object
   * of the arguments (spawned calls of the HTTP API), which the container binds as an endpoint does.
   */
  readonly contentType?: string;
}

/** A map's (or a terminal's) hold on its run (RunManager.attach). */
export interface RunAttachment {
  /** The app the run's code is (its spec's name). */
  readonly app: string;
  readonly workload: Workload;
  /** The scheduler's unit of its containers. */
  readonly unitKey: string;
  /** Where its log lines go. */
  readonly logKey: DeploymentLogKey;
  /** Aborted when the run ends (by its client, idle, svc stopping). */
  readonly ended: AbortSignal;
  /** The map is over: it no longer keeps the run from idling. */
  release(): void;
}

/** A call's last frame when the connection to its container breaks mid-call (the container died). */
export function brokenCallFrame(error: SvcError): string {
  return `${JSON.stringify({ type: 'error', code: error.code, exception: `${error.code}: ${error.message}`, pickle: null, traceback: null })}\n`;
}

/** How long a run or a preview lives unused unless its creator says otherwise. */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 300;
/** The range its creator may choose from: a second to a day. */
export const IDLE_TIMEOUT_RANGE = { min: 1, max: 86_400 } as const;

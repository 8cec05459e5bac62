/** What `startPlatform()` takes (core/platform/platform.ts), and `buildServices()` from it (core/platform/platform-services.ts). */
import type { ServerConfig } from '../../config/schema.js';
import type { StateKind } from '../http/api/control-plane.js';
import type { AutoscalerOptions } from '../services/autoscale/controller.js';
import type { ErrorReporter } from '../traffic/gateway/error-middleware.js';
import type { LogSink } from '../infra/scheduler/types.js';
import type { CallbackBackoff } from '../services/calls/callback-delivery.js';

export interface PlatformOptions {
  readonly config: ServerConfig;
  /** Receives every container log line. */
  readonly logs?: LogSink;
  /** Receives unexpected errors (bugs), with the request they happened in. */
  readonly report?: ErrorReporter;
  /** Autoscaler timing (tick, crash back-off, drain timeout); tests shorten it. */
  readonly autoscale?: Pick<AutoscalerOptions, 'tickMs' | 'crash' | 'drainTimeoutMs'>;
  /**
   * Where workspaces, accounts and tokens live, instead of the config's `state`:
   * `memory` keeps nothing, so that several `svc serve` previews can share a data dir.
   */
  readonly state?: StateKind;
  /**
   * Containers fork from a warm zygote of their image instead of starting a
   * new interpreter (fast cold starts and deploys); default: SVC_ZYGOTES
   * (zygotesFromEnvironment: on unless `0`). Only the local driver has zygotes.
   */
  readonly zygotes?: boolean;
  /**
   * The key that signs bundle download URLs for Nomad's artifacts; default:
   * SVC_ARTIFACT_SECRET, else `<data dir>/artifact-signing.key` (only with `scheduler: nomad`).
   */
  readonly artifactSecret?: Buffer;
  /** When completion callbacks are tried again (DEFAULT_CALLBACK_BACKOFF: 1 s doubling to 60 s, for an hour); tests shorten it. */
  readonly callbackBackoff?: Partial<CallbackBackoff>;
  /** Largest bundle the API accepts (DEFAULT_MAX_BUNDLE_BYTES); tests lower it. */
  readonly maxBundleBytes?: number;
  /**
   * Stops the start (SIGTERM while svc starts): the start takes no further
   * step, cuts the restore short as `Platform#close()` would (no unit starts
   * after the abort, requests in flight finish, the units it started stop),
   * closes the state store and rejects with `shutting_down`.
   */
  readonly signal?: AbortSignal;
  /**
   * Called when this replica loses the leadership (`state: consul`). It has let
   * go of the workloads and answers as a standby (`cutOff`: as `stranded`, serving
   * its routes, because Consul stopped answering); `svc server` then starts the
   * platform again as a fresh follower (once Consul answers, when cut off).
   */
  readonly onLeadershipLost?: (reason: string, cutOff: boolean) => void;
}

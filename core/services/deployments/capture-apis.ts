/**
 * The deploy's part in an ASGI app's OpenAPI description: once a new unit's
 * container is up and before its route switches to it (no request but ours
 * reaches it yet), read the description (core/services/app-api/capture.ts) and keep
 * it with the version (the state store, for stage `deployed`). The one
 * container a deploy always starts, even with min_containers=0, is the one
 * read: a scale-to-zero app is captured without a cold start of its own,
 * and nothing reads it again until the next deploy of it (not a resume, a
 * restore or a scale-up).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ApiOutcome } from '../app-api/types.js';
import { workloadPrefix } from '../../model/urls.js';
import type { DeploymentUnit } from '../../infra/scheduler/types.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { LiveDeployment } from './live.js';
import type { DeploymentRecords } from './records.js';

/** The default path of the description: FastAPI's. */
export const DEFAULT_OPENAPI_PATH = '/openapi.json';

/** Reads the description of `unit`'s app from one of its containers (see DeploymentManagerOptions#captureApi). */
export type ApiReader = (
  unit: DeploymentUnit,
  request: { readonly source: string; readonly prefix: string; readonly version: number },
) => Promise<ApiOutcome>;

export interface CaptureContext {
  readonly read: ApiReader | undefined;
  readonly records: DeploymentRecords | undefined;
}

/** What each ASGI workload of the deploy gets, by name; other kinds are absent. Never throws. */
export async function captureApis(
  context: CaptureContext,
  ref: DeploymentRef,
  units: readonly DeploymentUnit[],
  versions: ReadonlyMap<string, number>,
  previous: LiveDeployment | undefined,
): Promise<Map<string, ApiOutcome>> {
  const asgi = units.filter((unit) => unit.workload.kind === 'asgi');
  const outcomes = await Promise.all(
    asgi.map(async (unit): Promise<ApiOutcome> => {
      const { workload } = unit;
      const version = versions.get(workload.name)!;
      const source = workload.openapi === undefined ? DEFAULT_OPENAPI_PATH : workload.openapi;
      let outcome: ApiOutcome =
        source === null || context.read === undefined
          ? {
              capture: null,
              message:
                source === null
                  ? 'no OpenAPI description: not read (openapi=None)'
                  : 'no OpenAPI description: this platform does not read them',
            }
          : await context.read(unit, { source, prefix: workloadPrefix(ref, workload.name), version });
      // Not read this time (slow, say), but the code and the options are those of the version before: its description still holds.
      const before = previous?.workloads.get(workload.name);
      if (
        outcome.capture === null &&
        source !== null &&
        before?.api?.capture &&
        before.bundleSha256 !== null &&
        before.bundleSha256 === unit.source.bundleSha256 &&
        isDeepStrictEqual(before.workload, workload)
      ) {
        outcome = {
          capture: { ...before.api.capture, version },
          message: `${outcome.message}; kept the one of version ${before.version} (the same code)`,
        };
      }
      if (ref.stage === 'deployed' && context.records) {
        outcome = await context.records.setApi(ref.workspace, ref.app, workload.name, outcome.capture).then(
          () => outcome,
          (error: unknown) => ({
            capture: outcome.capture,
            message: `${outcome.message} (kept in memory only, not in the state store: ${(error as Error).message})`,
          }),
        );
      }
      return outcome;
    }),
  );
  return new Map(asgi.map((unit, i) => [unit.workload.name, outcomes[i]!]));
}

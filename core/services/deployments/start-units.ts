/**
 * Builds the images of some workloads and starts one new unit each, under a
 * fresh unit key, until its first containers are healthy. Nothing here
 * touches routes: the caller switches them once every unit is up, so the old
 * units keep serving while the new ones start (and when they fail to).
 */
import type { BuiltImage, ImageBuilder } from '../../infra/images/types.js';
import type { DeploymentUnit, SchedulerDriver, SourceRef, UnitMount } from '../../infra/scheduler/types.js';
import { SvcError } from '../../model/errors.js';
import type { VolumeMounting } from '../volumes/types.js';
import type { Workload } from '../../model/workload/types.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { DeployProgress } from './types.js';

export interface UnitToStart {
  readonly workload: Workload;
  readonly source: SourceRef;
  readonly key: string;
  /**
   * Set when `key` is a unit that already runs (adopted after a take-over): the key to start
   * under instead if registering it again would replace its running containers (the scheduler's
   * plan shows a destructive update), so that the old ones serve until the new ones are up.
   */
  readonly replaceKey?: () => string;
}

export interface StartContext {
  readonly images: ImageBuilder;
  readonly driver: SchedulerDriver;
  readonly progress: (event: DeployProgress) => void;
  /** Resolves once the gateway can send a unit's requests somewhere (its registry lists an instance), or gives up. */
  readonly routable?: (unitKey: string) => Promise<void>;
  /** The variables of a workload's secrets (core/services/secrets), opened when its unit is made; absent: workloads get none. */
  readonly secretEnv?: (ref: DeploymentRef, workload: Workload) => Promise<Record<string, string>>;
  /** The workspaces' volumes (core/services/volumes), for workloads that mount some; absent: such a workload is refused. */
  readonly volumes?: VolumeMounting;
}

/** The mounts of `workload`'s unit: each of its volumes with where its files are. */
function mountsOf(volumes: VolumeMounting | undefined, ref: DeploymentRef, workload: Workload): { mounts?: UnitMount[] } {
  const wanted = workload.volumes ?? [];
  if (wanted.length === 0) return {};
  if (volumes === undefined) {
    throw new SvcError('bad_request', `the workload ${workload.name} mounts volumes, but this server keeps none.`, {
      hint: 'Deploy it to a svc server with volumes (docs/volumes.md), or drop volumes= from its decorator.',
    });
  }
  return {
    mounts: wanted.map((mount) => ({
      path: mount.path,
      volume: mount.volume,
      source: volumes.mountSource(ref.workspace, mount.volume),
      readOnly: mount.readOnly,
    })),
  };
}

/** The unit under its adopted key when starting it there changes nothing that runs; else under a fresh key. */
async function keptOrReplaced(
  driver: SchedulerDriver,
  unit: DeploymentUnit,
  replaceKey: (() => string) | undefined,
): Promise<DeploymentUnit> {
  if (replaceKey === undefined) return unit;
  const plan = driver.plan === undefined ? null : await driver.plan(unit).catch(() => undefined);
  // No plan to ask (the local driver's units never outlive svc) or none to be had: a fresh unit is the safe side.
  if (plan === null || plan === undefined || (plan.placements.destructiveUpdate ?? 0) > 0) return { ...unit, key: replaceKey() };
  return unit;
}

/** Builds (or finds in the cache) each image the units need, once, and makes the units. */
export async function buildUnits(
  context: Pick<StartContext, 'images' | 'progress' | 'secretEnv' | 'volumes'>,
  ref: DeploymentRef,
  wanted: readonly UnitToStart[],
): Promise<DeploymentUnit[]> {
  const { images, progress } = context;
  const built = new Map<string, BuiltImage>();
  for (const { workload } of wanted) {
    const image = workload.image;
    if (built.has(image.id)) continue;
    progress({ type: 'image', imageId: image.id, status: 'building' });
    const result = await images.build(image, (line) => progress({ type: 'image', imageId: image.id, status: 'log', line }));
    built.set(image.id, result);
    progress({ type: 'image', imageId: image.id, status: result.cached ? 'cached' : 'built' });
  }
  return Promise.all(
    wanted.map(async ({ workload, source, key }) => {
      const secretEnv =
        (workload.secrets ?? []).length === 0 || context.secretEnv === undefined ? undefined : await context.secretEnv(ref, workload);
      return {
        key,
        ref,
        workload,
        image: built.get(workload.image.id)!,
        source,
        ...(secretEnv === undefined ? {} : { secretEnv }),
        ...mountsOf(context.volumes, ref, workload),
      };
    }),
  );
}

/** Resolves with the started units (in the order given); on any failure removes all of them and rejects. */
export async function startUnits(context: StartContext, ref: DeploymentRef, wanted: readonly UnitToStart[]): Promise<DeploymentUnit[]> {
  const { driver, progress } = context;
  const built = await buildUnits(context, ref, wanted);
  const units = await Promise.all(built.map((unit, i) => keptOrReplaced(driver, unit, wanted[i]!.replaceKey)));
  try {
    await Promise.all(
      units.map(async (unit) => {
        progress({ type: 'workload', workload: unit.workload.name, status: 'starting' });
        await driver.submit(unit);
        // At least one even with min_containers=0, so that a broken app fails its deploy with its logs.
        await driver.scale(unit.key, Math.max(1, unit.workload.scaling.autoscaler.minContainers));
        // Before the caller switches the route: else requests queue until the gateway sees the instance.
        await context.routable?.(unit.key);
        progress({ type: 'workload', workload: unit.workload.name, status: 'ready' });
      }),
    );
  } catch (error) {
    await Promise.all(units.map((unit) => driver.remove(unit.key)));
    throw error;
  }
  return units;
}

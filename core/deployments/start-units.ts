/**
 * Builds the images of some workloads and starts one new unit each, under a
 * fresh unit key, until its first containers are healthy. Nothing here
 * touches routes: the caller switches them once every unit is up, so the old
 * units keep serving while the new ones start (and when they fail to).
 */
import type { BuiltImage, ImageBuilder } from '../images/types.js';
import type { DeploymentUnit, SchedulerDriver, SourceRef } from '../scheduler/types.js';
import type { Workload } from '../workload/types.js';
import type { DeploymentRef } from './keys.js';
import type { DeployProgress } from './types.js';

export interface UnitToStart {
  readonly workload: Workload;
  readonly source: SourceRef;
  readonly key: string;
}

export interface StartContext {
  readonly images: ImageBuilder;
  readonly driver: SchedulerDriver;
  readonly progress: (event: DeployProgress) => void;
  /** Resolves once the gateway can send a unit's requests somewhere (its registry lists an instance), or gives up. */
  readonly routable?: (unitKey: string) => Promise<void>;
}

/** Builds (or finds in the cache) each image the units need, once, and makes the units. */
export async function buildUnits(context: Pick<StartContext, 'images' | 'progress'>, ref: DeploymentRef, wanted: readonly UnitToStart[]): Promise<DeploymentUnit[]> {
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
  return wanted.map(({ workload, source, key }) => ({ key, ref, workload, image: built.get(workload.image.id)!, source }));
}

/** Resolves with the started units (in the order given); on any failure removes all of them and rejects. */
export async function startUnits(context: StartContext, ref: DeploymentRef, wanted: readonly UnitToStart[]): Promise<DeploymentUnit[]> {
  const { driver, progress } = context;
  const units = await buildUnits(context, ref, wanted);
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

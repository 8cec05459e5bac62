import type { BundleInfo, CodeBundles } from '../bundles/types.js';
import { SvcError } from '../errors.js';
import { hostUrl, workloadUrl } from '../gateway/urls.js';
import type { RouteTable } from '../gateway/route-table.js';
import type { BuiltImage, ImageBuilder } from '../images/types.js';
import type { PluginHost } from '../plugin/host.js';
import type { Principal } from '../plugin/types.js';
import type { DeploymentUnit, SchedulerDriver, SourceRef } from '../scheduler/types.js';
import type { AppSpec, Workload, WorkloadKind } from '../workload/types.js';
import { deploymentId, unitKey, type DeploymentRef, type Stage } from './keys.js';
import { hostTakenWarnings, routeEntriesFor } from './route-entries.js';
import type { DeployedWorkload, Deployment, DeployProgress } from './types.js';
import { unenforcedOptions } from './warnings.js';

/**
 * Kinds that get a URL and running containers. Functions are called on
 * demand (`.remote()`, `svc run`), which arrives with the client: they are
 * recorded but not started.
 */
const SERVED_KINDS: ReadonlySet<WorkloadKind> = new Set(['endpoint', 'asgi', 'realtime']);

export interface DeployRequest {
  readonly spec: AppSpec;
  readonly source: SourceRef;
  readonly workspace: string;
  readonly stage: Stage;
  readonly principal: Principal | null;
}

/** What the manager needs of the autoscaler (core/autoscale/controller.ts). */
export interface UnitScaler {
  /** Takes over a unit whose first containers are healthy: scales it from now on. */
  manage(unit: DeploymentUnit): void;
  /** Stops scaling the unit, lets its requests in flight finish, then removes its containers. */
  stopUnit(key: string): Promise<void>;
}

export interface DeploymentManagerOptions {
  readonly plugins: PluginHost;
  readonly images: ImageBuilder;
  readonly driver: SchedulerDriver;
  readonly routes: RouteTable;
  /** Base URL of the gateway, for the URLs printed to users. */
  readonly baseUrl: () => string;
  /** Base domain of host-based URLs (`<app>-<workload>.<domain>`); null or absent: path URLs only. */
  readonly baseDomain?: string | null;
  /**
   * Bundles the project and runs containers from its extracted copy, so that later edits do
   * not change a running deployment. Without it, containers run from the project folder.
   */
  readonly bundles?: CodeBundles;
  /**
   * Scales each unit after its deploy and drains it on removal. Without it,
   * units keep the containers the deploy started and removal stops them at once.
   */
  readonly autoscaler?: UnitScaler;
}

/**
 * Turns an app spec into running workloads: plugins authorize it, images are
 * built, one deployment unit per workload is submitted to the driver and
 * scaled up, and the gateway gets its routes once containers are healthy.
 * Then the autoscaler owns each unit's container count.
 */
export class DeploymentManager {
  readonly #options: DeploymentManagerOptions;
  readonly #deployments = new Map<string, Deployment>();

  constructor(options: DeploymentManagerOptions) {
    this.#options = options;
  }

  list(): Deployment[] {
    return [...this.#deployments.values()];
  }

  async deploy(request: DeployRequest, progress: (event: DeployProgress) => void = () => {}): Promise<Deployment> {
    const { plugins, images, driver, routes } = this.#options;
    const spec = await plugins.sequential('authorizeDeploy', request.spec, {
      workspace: request.workspace,
      stage: request.stage,
      principal: request.principal,
    });
    const ref: DeploymentRef = { workspace: request.workspace, app: spec.name, stage: request.stage };
    if (this.#deployments.has(deploymentId(ref))) await this.remove(ref);

    const served = spec.workloads.filter((w) => SERVED_KINDS.has(w.kind));
    const { entries, warnings: hostWarnings } = routeEntriesFor(ref, served, this.#options.baseDomain ?? null);
    // Before building or starting anything: a taken URL fails the deploy with nothing to undo.
    routes.assertFree(entries);

    let source: SourceRef = request.source;
    let bundle: BundleInfo | null = null;
    if (this.#options.bundles) {
      progress({ type: 'bundle', status: 'packing', root: request.source.root });
      ({ source, bundle } = await this.#options.bundles.prepare(request.source));
      progress({ type: 'bundle', status: 'ready', bundle });
    }

    const built = new Map<string, BuiltImage>();
    for (const image of spec.images) {
      progress({ type: 'image', imageId: image.id, status: 'building' });
      const result = await images.build(image, (line) => progress({ type: 'image', imageId: image.id, status: 'log', line }));
      built.set(image.id, result);
      progress({ type: 'image', imageId: image.id, status: result.cached ? 'cached' : 'built' });
    }

    const units: DeploymentUnit[] = served.map((workload) => ({
      key: unitKey(ref, workload.name),
      ref,
      workload,
      image: built.get(workload.image.id)!,
      source,
    }));
    try {
      await Promise.all(
        units.map(async (unit) => {
          progress({ type: 'workload', workload: unit.workload.name, status: 'starting' });
          await driver.submit(unit);
          // At least one even with min_containers=0, so that a broken app fails its deploy with its logs.
          await driver.scale(unit.key, Math.max(1, unit.workload.scaling.autoscaler.minContainers));
          progress({ type: 'workload', workload: unit.workload.name, status: 'ready' });
        }),
      );
      // Only now: a request that arrived earlier would have met no container and a misleading 503.
      // add() checks again, for a deploy that took the URL meanwhile.
      hostWarnings.push(...hostTakenWarnings(routes.add(entries)));
    } catch (error) {
      await Promise.all(units.map((unit) => driver.remove(unit.key)));
      throw error;
    }
    for (const unit of units) this.#options.autoscaler?.manage(unit);

    const deployment: Deployment = {
      ref,
      spec,
      source,
      bundle,
      units: units.map((u) => u.key),
      workloads: spec.workloads.map((w) => this.#describe(ref, w)),
      warnings: [
        // The local driver runs plain process groups: cpu and memory are not limited there.
        ...served.flatMap((workload) => unenforcedOptions(workload, { resourcesLimited: driver.name !== 'local' })),
        ...hostWarnings,
      ],
      createdAt: new Date(),
    };
    this.#deployments.set(deploymentId(ref), deployment);
    await plugins.parallel('onEvent', {
      type: 'deployment.ready',
      workspace: ref.workspace,
      app: ref.app,
      stage: ref.stage,
      workloads: deployment.workloads.map(({ name, kind, url }) => ({ name, kind, url })),
    });
    return deployment;
  }

  /**
   * Removes a deployment's routes, lets the requests in flight finish (with
   * an autoscaler: drained), then stops every container.
   */
  async remove(ref: DeploymentRef): Promise<void> {
    const deployment = this.#deployments.get(deploymentId(ref));
    if (!deployment) throw new SvcError('not_found', `no ${ref.stage} deployment of ${ref.app} in workspace ${ref.workspace}.`);
    const { autoscaler, driver } = this.#options;
    for (const unit of deployment.units) this.#options.routes.removeUnit(unit);
    await Promise.all(deployment.units.map((unit) => (autoscaler ? autoscaler.stopUnit(unit) : driver.remove(unit))));
    this.#deployments.delete(deploymentId(ref));
    await this.#options.plugins.parallel('onEvent', { type: 'deployment.stopped', workspace: ref.workspace, app: ref.app, stage: ref.stage });
  }

  async removeAll(): Promise<void> {
    await Promise.all([...this.#deployments.values()].map((d) => this.remove(d.ref)));
  }

  #describe(ref: DeploymentRef, workload: Workload): DeployedWorkload {
    const served = SERVED_KINDS.has(workload.kind);
    const http = workload.http;
    const host = served ? this.#options.routes.hostOf(unitKey(ref, workload.name)) : null;
    return {
      name: workload.name,
      kind: workload.kind,
      url: served && http ? publicUrl(workloadUrl(this.#options.baseUrl(), ref, workload.name, http.route), workload.kind) : null,
      hostUrl: host && http ? publicUrl(hostUrl(this.#options.baseUrl(), host, http.route), workload.kind) : null,
      methods: http?.methods ?? [],
      authorized: http?.authorized ?? true,
      parameters: workload.parameters,
      note: served || workload.kind === 'function' ? null : `${workload.kind} workloads are not served by this version yet`,
    };
  }
}

/** A realtime workload is reached over WebSocket: its URL says so. */
function publicUrl(httpUrl: string, kind: WorkloadKind): string {
  return kind === 'realtime' ? httpUrl.replace(/^http/, 'ws') : httpUrl;
}

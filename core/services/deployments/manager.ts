import { SvcError } from '../../model/errors.js';
import type { AppSpec, Workload } from '../../model/workload/types.js';
import { describeDeployment, isServed, type LiveDeployment, type LiveWorkload } from './live.js';
import { deploymentId, parseUnitKey, servingUnitKey, type DeploymentRef } from '../../model/deployment-keys.js';
import { changeRefusedError, notRestoredError, restartingError } from './offline.js';
import type { AdoptUnit, DeploymentManagerOptions, DeployRequest } from './manager-options.js';
import { routeEntriesFor } from './route-entries.js';
import { deployCode } from './deploy-code.js';
import { installRoute, takeDown, unroute, type LiveRoutes } from './live-routes.js';
import { recordVersions, restoredLive } from './live-records.js';
import { AppTransitions } from './transitions.js';
import { planDeploy, type DeployPlan } from './plan.js';
import { startUnits, type StartContext } from './start-units.js';
import { captureApis } from './capture-apis.js';
import { guardedStart } from './guarded-start.js';
import type { Deployment, DeployProgress } from './types.js';
import { domainsNotServed, unlimitedResources } from './warnings.js';
import { rollbackTargets } from './history.js';
import { overrideOf, scaledBy, type ScaleChange } from './scale-by-hand.js';
import { gpuUnavailable } from '../../model/gpus/gpu-request.js';

export type { AdoptUnit, DeploymentManagerOptions, DeployRequest, UnitScaler } from './manager-options.js';

/**
 * Runs deployments and moves them through their lifecycle (docs/api.md): deploy
 * an app or one workload (a new version each time, switched in with no
 * downtime), prune, pause and resume an app, stop or delete one deployment,
 * delete an app, and restore everything after a restart. Each transition of
 * one app runs alone (a queue per app), writes its records (stage `deployed`)
 * before it changes routes, and only then stops what it replaced.
 */
export class DeploymentManager {
  readonly #options: DeploymentManagerOptions;
  readonly #live = new Map<string, LiveDeployment>();
  readonly #transitions = new AppTransitions(() => this.#closing);
  readonly #routing: LiveRoutes;
  #serial = 1;
  /** Aborted when shutdown() begins: no transition starts, no unit starts, no build is waited for. */
  readonly #stopping = new AbortController();
  #shutdown: Promise<void> | undefined;
  /** Units submitted to the driver and not stopped since: what a shutdown must stop, serving or still starting. */
  readonly #submitted = new Set<string>();

  constructor(options: DeploymentManagerOptions) {
    this.#options = options;
    this.#routing = { routes: options.routes, baseDomain: options.baseDomain ?? null, closing: () => this.#closing };
  }

  list(): Deployment[] {
    return [...this.#live.values()].map((live) => this.#describe(live));
  }

  get(ref: DeploymentRef): Deployment | null {
    const live = this.#live.get(deploymentId(ref));
    return live ? this.#describe(live) : null;
  }

  async deploy(request: DeployRequest, progress: (event: DeployProgress) => void = () => {}): Promise<Deployment> {
    const { spec, ref } = await this.#authorize(request, false);
    const logs = this.#options.logs;
    const built = request.workload === undefined ? spec.workloads.map((w) => w.name) : [request.workload];
    const withBuildLog =
      logs === undefined
        ? progress
        : (event: DeployProgress) => {
            // The image is the app's: its build lines go to each workload this deploy starts.
            if (event.type === 'image' && event.status === 'log')
              for (const workload of built) logs.addBuildLine({ ...ref, workload }, event.line);
            progress(event);
          };
    return this.#exclusive(ref, () =>
      this.#deploy(ref, spec, request, withBuildLog).catch((error: unknown) => {
        // A failed first deploy of a workload leaves no deployment: its build lines must not outlive it (on disk, too).
        const live = this.#live.get(deploymentId(ref));
        for (const workload of built) if (!live?.workloads.has(workload)) logs?.forget({ ...ref, workload });
        throw error;
      }),
    );
  }

  /**
   * A dry run of `deploy(request)`: the same checks (plugins' authorizeDeploy,
   * the workload, free URLs, the bundle), then what it would start and what
   * the scheduler says it would do (plan.ts). Changes nothing.
   */
  async plan(request: DeployRequest): Promise<DeployPlan> {
    const { spec, ref } = await this.#authorize(request, true);
    const { previous, targets, served } = await this.#admit(ref, spec, request);
    const { source } = await deployCode(this.#options.bundles, spec, request, () => {});
    // The keys the deploy would take next (nothing is taken: the plan changes nothing).
    const units = served.map((workload, i) => ({ workload, source, key: servingUnitKey(ref, workload.name, this.#serial + i) }));
    const removed =
      request.prune && request.workload === undefined && previous
        ? [...previous.workloads.keys()].filter((name) => !spec.workloads.some((w) => w.name === name))
        : [];
    return planDeploy(
      {
        images: this.#options.images,
        driver: this.#options.driver,
        progress: () => {},
        ...(this.#options.volumes ? { volumes: this.#options.volumes } : {}),
      },
      {
        ref,
        baseUrl: this.#options.baseUrl(),
        units,
        removed,
        targets: targets.map((w) => ({
          name: w.name,
          kind: w.kind,
          route: isServed(w) ? (w.http?.route ?? null) : null,
          deployed: previous?.workloads.has(w.name) ?? false,
        })),
      },
    );
  }

  /** The plugins' authorizeDeploy (which may change the spec), and the deployment the request is for. */
  async #authorize(request: DeployRequest, dryRun: boolean): Promise<{ spec: AppSpec; ref: DeploymentRef }> {
    const spec = await this.#options.plugins.sequential('authorizeDeploy', request.spec, {
      workspace: request.workspace,
      stage: request.stage,
      principal: request.principal,
      ...(dryRun ? { dryRun: true } : {}),
    });
    return { spec, ref: { workspace: request.workspace, app: spec.name, stage: request.stage } };
  }

  /**
   * The checks a deploy and its dry run make before anything changes: the
   * workload named exists, the workspace has every secret the targets name
   * (else the deploy fails, naming it), and no URL they take is another
   * app's (else it fails with nothing built or started, nothing to undo).
   */
  async #admit(
    ref: DeploymentRef,
    spec: AppSpec,
    request: DeployRequest,
  ): Promise<{ previous: LiveDeployment | undefined; targets: readonly Workload[]; served: Workload[] }> {
    const previous = this.#live.get(deploymentId(ref));
    const targets = request.workload === undefined ? spec.workloads : [workloadOf(spec, request.workload)];
    await this.#checkSecrets(ref, targets);
    await this.#checkVolumes(ref, targets);
    this.#checkGpus(targets);
    const served = targets.filter(isServed);
    const { entries } = routeEntriesFor(ref, served, this.#baseDomain);
    this.#options.routes.assertFree(entries.filter((entry) => !previous?.workloads.has(entry.workload.name)));
    // The containers a deploy starts first (start-units.ts), beside what the workspace runs but these replace.
    const replaced = served.flatMap((workload) => previous?.workloads.get(workload.name)?.unit ?? []);
    const starting = served.map((workload) => ({ workload, count: Math.max(1, workload.scaling.autoscaler.minContainers) }));
    const refusal = this.#options.autoscaler?.quotaRefusal(ref.workspace, starting, replaced);
    if (refusal) throw refusal;
    return { previous, targets, served };
  }

  async #deploy(ref: DeploymentRef, spec: AppSpec, request: DeployRequest, progress: (event: DeployProgress) => void): Promise<Deployment> {
    const { previous, targets, served } = await this.#admit(ref, spec, request);
    const { source, bundle } = await deployCode(this.#options.bundles, spec, request, progress);
    if (request.inlineSecrets !== undefined) await this.#options.secrets?.putInline(ref, request.inlineSecrets);
    const units = await startUnits(
      this.#startContext(progress),
      ref,
      served.map((workload) => ({ workload, source, key: this.#nextKey(ref, workload.name) })),
    );
    const versions = await this.#recordVersions(ref, previous, units, {
      spec,
      targets,
      source,
      bundle,
      principal: request.principal,
    });
    // Before the switch: nothing but this reaches the new units yet.
    const apis = await captureApis(
      { read: this.#options.captureApi, records: ref.stage === 'deployed' ? this.#options.records : undefined },
      ref,
      units,
      versions,
      previous,
    );

    // The switch: from here on nothing fails. Each route now leads to the new unit (one synchronous step).
    const live: LiveDeployment = previous ?? {
      ref,
      entry: spec.entry,
      sdkVersion: spec.sdkVersion,
      workloads: new Map(),
      paused: false,
      bundle,
      warnings: [],
      createdAt: new Date(),
    };
    const unitOf = new Map(units.map((unit) => [unit.workload.name, unit.key]));
    const replaced: string[] = [];
    for (const workload of targets) {
      const before = live.workloads.get(workload.name);
      if (before?.unit) replaced.push(before.unit);
      live.workloads.set(workload.name, {
        workload,
        source,
        version: versions.get(workload.name)!,
        bundleSha256: bundle?.sha256 ?? null,
        status: 'running',
        unit: unitOf.get(workload.name) ?? null,
        routeUnit: before?.routeUnit ?? null,
        failure: null,
        api: apis.get(workload.name) ?? null,
      });
    }
    const wasPaused = live.paused;
    Object.assign(live, { entry: spec.entry, sdkVersion: spec.sdkVersion, paused: false, bundle });
    const warnings = targets.flatMap((workload) => installRoute(this.#routing, live, live.workloads.get(workload.name)!));
    for (const unit of units) {
      this.#options.logs?.setVersion(unit.key, versions.get(unit.workload.name)!);
      this.#options.autoscaler?.manage(unit);
    }
    this.#live.set(deploymentId(ref), live);

    if (request.prune && request.workload === undefined) {
      const gone = [...live.workloads.keys()].filter((name) => !spec.workloads.some((w) => w.name === name));
      await Promise.all(gone.map((name) => this.#deleteWorkload(live, name)));
    }
    // A deploy brings a paused app back: the workloads it did not deploy start again at their version.
    if (wasPaused) {
      const others = [...live.workloads.values()].filter((lw) => lw.status === 'running' && lw.unit === null && isServed(lw.workload));
      await this.#startWorkloads(live, others).catch((error: unknown) =>
        warnings.push(`the app was paused and some workloads could not start again: ${(error as Error).message}`),
      );
    }
    // Old versions drain after the switch: the requests they hold finish there.
    await Promise.all(replaced.map((key) => this.#stopUnit(key)));

    return this.#ready(ref, live, served, warnings);
  }

  /** The new versions recorded; when that fails, the units started for them are removed again. */
  async #recordVersions(
    ref: DeploymentRef,
    previous: LiveDeployment | undefined,
    units: readonly { readonly key: string }[],
    record: Parameters<typeof recordVersions>[3],
  ): Promise<Map<string, number>> {
    try {
      return await recordVersions(this.#options.records, ref, previous, record);
    } catch (error) {
      await Promise.all(units.map((unit) => this.#options.driver.remove(unit.key)));
      throw error;
    }
  }

  /** The deployment's warnings set, and the plugins told that it is ready. */
  async #ready(ref: DeploymentRef, live: LiveDeployment, served: readonly Workload[], warnings: readonly string[]): Promise<Deployment> {
    live.warnings = [
      // Without cgroups (not root, no controller), the local driver cannot limit cpu and memory: said once.
      ...unlimitedResources(served, this.#options.driver.resourceLimits),
      ...(ref.stage === 'deployed' ? [] : served.flatMap(domainsNotServed)),
      ...warnings,
    ];
    const deployment = this.#describe(live);
    await this.#options.plugins.parallel('onEvent', {
      type: 'deployment.ready',
      workspace: ref.workspace,
      app: ref.app,
      stage: ref.stage,
      workloads: deployment.workloads.map(({ name, kind, url }) => ({ name, kind, url })),
    });
    return deployment;
  }

  /** Stops every workload of the app and keeps their definitions; its URLs answer `app_paused`. */
  pause(ref: DeploymentRef): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      if (ref.stage === 'deployed') await this.#options.records?.setPaused(ref.workspace, ref.app, true);
      live.paused = true;
      const stopping = [...live.workloads.values()].flatMap((lw) => takeDown(this.#routing, live, lw));
      await Promise.all(stopping.map((key) => this.#stopUnit(key)));
      await this.#stopped(ref);
      return this.#describe(live);
    });
  }

  /** Starts the workloads of a paused app again (not the stopped deployments), each at its current version. */
  resume(ref: DeploymentRef): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      if (!live.paused) return this.#describe(live);
      const records = ref.stage === 'deployed' ? this.#options.records : undefined;
      await records?.setPaused(ref.workspace, ref.app, false);
      live.paused = false;
      try {
        await this.#startWorkloads(
          live,
          [...live.workloads.values()].filter((lw) => lw.status === 'running' && isServed(lw.workload)),
        );
      } catch (error) {
        // Nothing started: the app is as paused as before.
        await records?.setPaused(ref.workspace, ref.app, true);
        live.paused = true;
        throw error;
      }
      return this.#describe(live);
    });
  }

  /** `<app>/<workload>` of each deployed workload of the workspace (previews and paused apps too) that mounts `volume`. */
  volumeUsers(workspace: string, volume: string): string[] {
    return [...this.#live.values()]
      .filter((live) => live.ref.workspace === workspace)
      .flatMap((live) =>
        [...live.workloads.values()]
          .filter((lw) => (lw.workload.volumes ?? []).some((mount) => mount.volume === volume))
          .map((lw) => workloadLabel(live.ref, lw.workload.name)),
      );
  }

  /**
   * After a secret changed (`svc secret set --restart`): every running workload of the workspace
   * that uses it gets a new unit, started with the secret's current values, and the old one
   * drains, as a deploy does. Returns `<app>/<workload>` of each, previews included.
   */
  async restartSecretUsers(workspace: string, secret: string): Promise<string[]> {
    const lives = [...this.#live.values()].filter((live) => live.ref.workspace === workspace);
    const restarted = await Promise.all(
      lives.map((live) =>
        this.#exclusive(live.ref, async () => {
          const users = [...live.workloads.values()].filter((lw) => lw.unit !== null && (lw.workload.secrets ?? []).includes(secret));
          await this.#restart(live, users);
          return users.map((lw) => workloadLabel(live.ref, lw.workload.name));
        }),
      ),
    );
    return restarted.flat();
  }

  /** `svc app rollover`: fresh containers for every running workload of the app, at the version each runs, switched in as a deploy is. */
  rollover(ref: DeploymentRef): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      await this.#restart(
        live,
        [...live.workloads.values()].filter((lw) => lw.unit !== null),
      );
      return this.#describe(live);
    });
  }

  /**
   * `svc app rollback`: each workload runs `version` again (without one, its version before the one it
   * runs), from the bundle and image that version recorded; started, then switched in, then the units
   * it replaces drain, as in a deploy. Recorded as the workloads' current version (history.ts).
   */
  rollback(ref: DeploymentRef, version?: number): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      const records = this.#options.records;
      if (ref.stage !== 'deployed' || records === undefined) {
        throw new SvcError('bad_request', `${ref.app} (${ref.stage}) keeps no versions to go back to; deployed apps do.`);
      }
      const targets = rollbackTargets(ref.app, await records.deployments(ref.workspace, ref.app), version);
      const next = targets.map(({ record, version: chosen }): LiveWorkload => {
        const before = live.workloads.get(record.workload);
        return {
          workload: chosen.workload,
          version: chosen.version,
          source: { root: chosen.sourceRoot, entry: chosen.entry },
          bundleSha256: chosen.bundleSha256,
          status: before?.status ?? record.status,
          unit: null,
          routeUnit: before?.routeUnit ?? null,
          failure: null,
          api: null,
        };
      });
      const replaced = next.flatMap((lw) => live.workloads.get(lw.workload.name)?.unit ?? []);
      const toStart = next.filter((lw) => lw.status === 'running' && !live.paused && isServed(lw.workload));
      await this.#startWorkloads(live, toStart);
      for (const lw of next) {
        live.workloads.set(lw.workload.name, lw);
        if (!toStart.includes(lw)) installRoute(this.#routing, live, lw);
        await records.setCurrentVersion(ref.workspace, ref.app, lw.workload.name, lw.version);
      }
      await Promise.all(replaced.map((key) => this.#stopUnit(key)));
      return this.#describe(live);
    });
  }

  /** New units for `users` at their version, switched in; the old ones drain. On failure the old ones serve on. */
  async #restart(live: LiveDeployment, users: readonly LiveWorkload[]): Promise<void> {
    const old = users.map((lw) => lw.unit!);
    for (const lw of users) lw.unit = null;
    try {
      await this.#startWorkloads(live, users);
    } catch (error) {
      users.forEach((lw, i) => {
        lw.unit = old[i]!;
      });
      throw error;
    }
    await Promise.all(old.map((key) => this.#stopUnit(key)));
  }

  /** Takes one workload offline (its URL answers `deployment_stopped`); a deploy of it starts it again. */
  stopWorkload(ref: DeploymentRef, workload: string): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      const lw = this.#requireWorkload(live, workload);
      if (ref.stage === 'deployed') await this.#options.records?.setStatus(ref.workspace, ref.app, workload, 'stopped');
      lw.status = 'stopped';
      await Promise.all(takeDown(this.#routing, live, lw).map((key) => this.#stopUnit(key)));
      return this.#describe(live);
    });
  }

  /**
   * `svc deployment scale`: the workload's scaling bounds as given (the others as they are), at once and
   * until its next deploy: the autoscaler scales within them from now on, and a scheduler that compiled
   * them into its job (Nomad) registers it again.
   */
  scaleWorkload(ref: DeploymentRef, workload: string, change: ScaleChange): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      const lw = this.#requireWorkload(live, workload);
      const where = workloadLabel(ref, workload);
      if (!isServed(lw.workload)) {
        throw new SvcError('bad_request', `${where} is a function: its containers start with its calls, within the bounds of its code.`, {
          hint: 'Change autoscaler= (or buffer_containers=) in the code and deploy it.',
        });
      }
      const scaling = scaledBy(lw.workload.scaling, change, where);
      const refusal = this.#options.autoscaler?.quotaRefusal(
        ref.workspace,
        [{ workload: lw.workload, count: scaling.autoscaler.minContainers }],
        lw.unit === null ? [] : [lw.unit],
      );
      if (refusal) throw refusal;
      if (ref.stage === 'deployed') {
        await this.#options.records?.setScaleOverride(ref.workspace, ref.app, workload, overrideOf(scaling, {}));
      }
      lw.workload = { ...lw.workload, scaling };
      lw.scaledByHand = true;
      // The scheduler first (a Nomad job refuses a count past its Scaling block), then the autoscaler.
      const { driver } = this.#options;
      if (lw.unit !== null) await this.#options.autoscaler?.retune(lw.unit, scaling, async (unit) => driver.rescale?.(unit));
      return this.#describe(live);
    });
  }

  /** Removes one deployment: its record, its URL (404 from now on) and its containers. */
  deleteWorkload(ref: DeploymentRef, workload: string): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      this.#requireWorkload(live, workload);
      await this.#deleteWorkload(live, workload);
      return this.#describe(live);
    });
  }

  /**
   * Deletes the app: its records, its routes (404 from now on), and, after
   * requests in flight finished (with an autoscaler: drained), its containers.
   */
  remove(ref: DeploymentRef): Promise<void> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      if (ref.stage === 'deployed') await this.#options.records?.deleteApp(ref.workspace, ref.app);
      this.#live.delete(deploymentId(ref));
      const stopping = [...live.workloads.values()].flatMap((lw) => unroute(this.#options.routes, lw));
      await Promise.all(stopping.map((key) => this.#stopUnit(key)));
      await this.#options.secrets?.forgetInline(ref);
      for (const workload of live.workloads.keys()) this.#options.logs?.forget({ ...ref, workload });
      await this.#stopped(ref);
    });
  }

  /**
   * svc is stopping; records stay untouched. From the first synchronous step
   * on, every URL that was serving answers 503 `shutting_down` while its
   * requests in flight finish (the autoscaler drains each unit before it
   * stops it), and transitions are refused with `shutting_down`. Transitions
   * already running (a deploy, the restore) are cut short: they wait for no
   * image build any more, start no unit, and the units they are starting are
   * removed. Resolves once every unit this manager started is stopped, after
   * waiting for those transitions (at most TRANSITIONS_WAIT_MS) and stopping
   * what they left. Idempotent: later calls share the first one's promise.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#shutDown();
    return this.#shutdown;
  }

  async #shutDown(): Promise<void> {
    this.#stopping.abort();
    const stops = this.#stopAll();
    const running = this.#transitions.running();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise<void>((resolve) => (timer = setTimeout(resolve, TRANSITIONS_WAIT_MS)))]);
    clearTimeout(timer);
    // What the transitions switched in before they ended (a deploy past its start), or after the bound.
    stops.push(...this.#stopAll());
    const failed = (await Promise.allSettled(stops)).find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Puts every route offline (`shutting_down`), drains and stops the units serving, and removes the ones still starting. */
  #stopAll(): Promise<void>[] {
    const serving = [...this.#live.values()].flatMap((live) =>
      [...live.workloads.values()].flatMap((lw) => takeDown(this.#routing, live, lw)),
    );
    const stops = serving.map((key) => this.#stopUnit(key));
    // Not serving yet, so nothing to drain: removing them makes the start that waits for them fail at once.
    for (const key of [...this.#submitted]) {
      this.#submitted.delete(key);
      stops.push(this.#options.driver.remove(key));
    }
    return stops;
  }

  get #closing(): boolean {
    return this.#stopping.signal.aborted;
  }

  /**
   * After a restart: every recorded app comes back as it was. Running
   * deployments of apps not paused start again from their bundle (images come
   * from the cache, or are built again); the others get their offline routes.
   * A deployment that cannot start is reported and answers `container_failed`.
   * `adopt` names the unit that already serves a workload (a new leader's
   * copy of the old leader's routes): restored under that key, its Nomad job
   * is registered again unchanged and its running allocations stay.
   */
  restore(adopt?: AdoptUnit): Promise<void> {
    const restoring = this.#restore(adopt);
    // Transitions asked for meanwhile (the server already listens) wait: none may run on an app before its records are back.
    this.#transitions.waitFor(restoring);
    return restoring;
  }

  async #restore(adopt: AdoptUnit | undefined): Promise<void> {
    const records = this.#options.records;
    if (!records) return;
    const apps = await records.apps();
    await Promise.all(
      apps.map((app) => {
        // Not through #exclusive: every other transition waits for the whole restore.
        return (async () => {
          const [stored, apis] = await Promise.all([records.deployments(app.workspace, app.name), records.apis(app.workspace, app.name)]);
          const live = restoredLive(app, stored, apis);
          const { ref } = live;
          this.#live.set(deploymentId(ref), live);
          const toStart = live.paused ? [] : [...live.workloads.values()].filter((lw) => lw.status === 'running' && isServed(lw.workload));
          for (const lw of live.workloads.values()) if (!toStart.includes(lw)) installRoute(this.#routing, live, lw);
          // Known from the first answer: until its container runs, its URL says it is starting (503,
          // Retry-After), never that it does not exist. An adopted unit already serves its route.
          for (const lw of toStart) {
            if (this.#adopted(ref, lw.workload.name, adopt) !== undefined) continue;
            lw.failure = restartingError(ref, lw.workload.name);
            installRoute(this.#routing, live, lw);
          }
          await this.#startWorkloads(live, toStart, adopt).catch((error: unknown) => {
            // Cut short by shutdown(): not a failure, and the routes answer shutting_down.
            if (!this.#closing) this.#options.report?.(error);
            for (const lw of toStart) {
              lw.failure = this.#closing ? null : notRestoredError(ref, lw.workload.name, error);
              installRoute(this.#routing, live, lw);
            }
          });
        })();
      }),
    );
  }

  /** Starts new units for workloads that are down, switches their routes to them and hands them to the autoscaler. */
  async #startWorkloads(live: LiveDeployment, down: readonly LiveWorkload[], adopt?: AdoptUnit): Promise<void> {
    if (down.length === 0) return;
    const { bundles } = this.#options;
    const wanted = await Promise.all(
      down.map(async (lw) => {
        // After a restart the extracted copy may be gone from the cache: extract the stored bundle again.
        const source = lw.bundleSha256 !== null && bundles ? (await bundles.fromStore(lw.bundleSha256, lw.source.entry)).source : lw.source;
        const fresh = () => {
          const key = this.#nextKey(live.ref, lw.workload.name);
          this.#options.logs?.setVersion(key, lw.version);
          return key;
        };
        const adopted = this.#adopted(live.ref, lw.workload.name, adopt);
        if (adopted === undefined) return { workload: lw.workload, source, key: fresh() };
        this.#options.logs?.setVersion(adopted, lw.version);
        return { workload: lw.workload, source, key: adopted, replaceKey: fresh };
      }),
    );
    const units = await startUnits(
      this.#startContext(() => {}),
      live.ref,
      wanted,
    );
    units.forEach((unit, i) => {
      const lw = down[i]!;
      lw.unit = unit.key;
      lw.failure = null;
      installRoute(this.#routing, live, lw);
      this.#options.autoscaler?.manage(unit);
    });
  }

  async #deleteWorkload(live: LiveDeployment, name: string): Promise<void> {
    const { ref } = live;
    if (ref.stage === 'deployed') await this.#options.records?.deleteDeployment(ref.workspace, ref.app, name);
    const lw = live.workloads.get(name)!;
    live.workloads.delete(name);
    await Promise.all(unroute(this.#options.routes, lw).map((key) => this.#stopUnit(key)));
    this.#options.logs?.forget({ ...ref, workload: name });
  }

  #stopUnit(key: string): Promise<void> {
    this.#submitted.delete(key);
    const { autoscaler, driver } = this.#options;
    return autoscaler ? autoscaler.stopUnit(key) : driver.remove(key);
  }

  /** The serving key `adopt` names for the workload, if it is one of it; later keys get higher serials. */
  #adopted(ref: DeploymentRef, workload: string, adopt: AdoptUnit | undefined): string | undefined {
    const key = adopt?.(ref, workload);
    const parsed = key === undefined ? undefined : parseUnitKey(key);
    if (
      parsed?.serial === undefined ||
      parsed.workspace !== ref.workspace ||
      parsed.app !== ref.app ||
      parsed.stage !== ref.stage ||
      parsed.workload !== workload
    )
      return undefined;
    this.#serial = Math.max(this.#serial, parsed.serial + 1);
    return key;
  }

  #nextKey(ref: DeploymentRef, workload: string): string {
    return servingUnitKey(ref, workload, this.#serial++);
  }

  async #checkSecrets(ref: DeploymentRef, targets: readonly Workload[]): Promise<void> {
    const names = targets.flatMap((workload) => workload.secrets ?? []);
    if (names.length > 0) await this.#options.secrets?.check(ref.workspace, names);
  }

  async #checkVolumes(ref: DeploymentRef, targets: readonly Workload[]): Promise<void> {
    const names = targets.flatMap((workload) => (workload.volumes ?? []).map((mount) => mount.volume));
    if (names.length > 0) await this.#options.volumes?.check(ref.workspace, names);
  }

  /** Each target's `gpu` against the machine's GPUs: one that could never start is refused before anything is built. */
  #checkGpus(targets: readonly Workload[]): void {
    const devices = this.#options.gpus;
    if (devices === null || devices === undefined) return;
    for (const workload of targets) {
      const request = workload.resources.gpu;
      const refusal = request === undefined ? null : gpuUnavailable(workload.name, request, devices);
      if (refusal) throw refusal;
    }
  }

  #startContext(progress: (event: DeployProgress) => void): StartContext {
    const { images, driver, routable, secrets, volumes } = this.#options;
    const secretEnv =
      secrets === undefined ? undefined : (ref: DeploymentRef, workload: Workload) => secrets.environment(ref, workload.secrets ?? []);
    // Once svc stops, no start waits for its image and no unit starts.
    return guardedStart(
      { images, driver, progress, ...(routable ? { routable } : {}), ...(secretEnv ? { secretEnv } : {}), ...(volumes ? { volumes } : {}) },
      this.#stopping.signal,
      () => changeRefusedError(),
      {
        submitted: (key) => this.#submitted.add(key),
        removed: (key) => this.#submitted.delete(key),
      },
    );
  }

  get #baseDomain(): string | null {
    return this.#options.baseDomain ?? null;
  }

  #require(ref: DeploymentRef): LiveDeployment {
    const live = this.#live.get(deploymentId(ref));
    if (!live)
      throw new SvcError('not_found', `no ${ref.stage === 'deployed' ? 'app' : 'preview of'} ${ref.app} in workspace ${ref.workspace}.`);
    return live;
  }

  #requireWorkload(live: LiveDeployment, workload: string): LiveWorkload {
    const lw = live.workloads.get(workload);
    if (!lw) throw new SvcError('not_found', `no deployment ${live.ref.app}/${workload} in workspace ${live.ref.workspace}.`);
    return lw;
  }

  async #stopped(ref: DeploymentRef): Promise<void> {
    await this.#options.plugins.parallel('onEvent', {
      type: 'deployment.stopped',
      workspace: ref.workspace,
      app: ref.app,
      stage: ref.stage,
    });
  }

  #describe(live: LiveDeployment): Deployment {
    return describeDeployment(live, { baseUrl: this.#options.baseUrl(), routes: this.#options.routes });
  }

  /** One transition of an app at a time (transitions.ts). */
  #exclusive<T>(ref: DeploymentRef, run: () => Promise<T>): Promise<T> {
    return this.#transitions.run(deploymentId(ref), run);
  }
}

/** How long shutdown() waits for transitions already running before it stops what they started (they wait for no image build). */
const TRANSITIONS_WAIT_MS = 30_000;

function workloadOf(spec: AppSpec, name: string): Workload {
  const workload = spec.workloads.find((w) => w.name === name);
  if (!workload) {
    throw new SvcError('not_found', `the app ${spec.name} has no workload ${name}.`, {
      hint: `Its workloads: ${spec.workloads.map((w) => w.name).join(', ') || '(none)'}.`,
    });
  }
  return workload;
}

/** How messages name a workload of a deployment: `<app>/<workload>`, a preview's stage in brackets. */
function workloadLabel(ref: DeploymentRef, workload: string): string {
  return `${ref.app}${ref.stage === 'deployed' ? '' : ` (${ref.stage})`}/${workload}`;
}

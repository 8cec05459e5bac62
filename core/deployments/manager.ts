import type { ApiCapture, ApiOutcome } from '../app-api/types.js';
import type { BundleInfo, CodeBundles } from '../bundles/types.js';
import { SvcError } from '../errors.js';
import type { RouteTable } from '../gateway/types.js';
import type { ImageBuilder } from '../images/types.js';
import type { PluginHost } from '../plugin/host.js';
import type { Principal } from '../plugin/types.js';
import type { DeploymentUnit, SchedulerDriver, SourceRef } from '../scheduler/types.js';
import type { AppSpec, Workload } from '../workload/types.js';
import { describeDeployment, isServed, type LiveDeployment, type LiveWorkload } from './live.js';
import { deploymentId, parseUnitKey, servingUnitKey, unitKey, type DeploymentRef, type Stage } from './keys.js';
import { appPausedError, changeRefusedError, deploymentStoppedError, notRestoredError, shuttingDownError } from './offline.js';
import { DeploymentRecords, currentVersion } from './records.js';
import { hostTakenWarnings, routeEntriesFor, routeEntryFor } from './route-entries.js';
import { planDeploy, type DeployPlan } from './plan.js';
import { startUnits, type StartContext } from './start-units.js';
import { captureApis, type ApiReader } from './capture-apis.js';
import { guardedStart, unlessAborted } from './guarded-start.js';
import type { Deployment, DeployProgress } from './types.js';
import { domainsNotServed, unlimitedResources } from './warnings.js';
import type { DeploymentLogs } from '../logs/deployment-logs.js';
import type { SecretEnvironment } from '../secrets/types.js';

export interface DeployRequest {
  readonly spec: AppSpec;
  /** The project folder (bundled first when the manager has bundles). Exactly one of `source` and `bundleSha256`. */
  readonly source?: SourceRef;
  /** A bundle already in the store (uploaded through the API). */
  readonly bundleSha256?: string;
  readonly workspace: string;
  readonly stage: Stage;
  readonly principal: Principal | null;
  /** Deploy only this workload of the spec (`svc deploy app.py:greet`); the others keep their version. */
  readonly workload?: string;
  /** Remove the app's deployed workloads that the spec no longer has (whole-app deploys only). */
  readonly prune?: boolean;
  /** The app's `svc.Secret.from_dict` values, which its workloads name `@<i>`; sent beside the manifest, kept sealed. */
  readonly inlineSecrets?: readonly Readonly<Record<string, string>>[];
}

/** What the manager needs of the autoscaler (core/autoscale/controller.ts). */
export interface UnitScaler {
  /** Takes over a unit whose first containers are healthy: scales it from now on. */
  manage(unit: DeploymentUnit): void;
  /** Stops scaling the unit, lets its requests in flight finish, then removes its containers. */
  stopUnit(key: string): Promise<void>;
}

/** The unit key that already serves a workload of a deployment, if any (see `restore`). */
export type AdoptUnit = (ref: DeploymentRef, workload: string) => string | undefined;

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
  /** Where stage `deployed` is kept across restarts; without it nothing is durable. */
  readonly records?: DeploymentRecords;
  /** Failures nobody waits for (a deployment that cannot be restored). */
  readonly report?: (error: unknown) => void;
  /**
   * The per-deployment log store (core/logs/deployment-logs.ts): told each
   * unit's version, given the image build lines of a deploy, and told when a
   * deployment is deleted (its history goes, its followers end).
   */
  readonly logs?: Pick<DeploymentLogs, 'setVersion' | 'addBuildLine' | 'forget'>;
  /** See StartContext#routable: a new unit's route switches once the gateway sees an instance of it. */
  readonly routable?: (unitKey: string) => Promise<void>;
  /** The workspaces' secrets: a deploy naming one that does not exist is refused first; units get their values. */
  readonly secrets?: SecretEnvironment;
  /**
   * Reads an ASGI app's OpenAPI description from its new unit during a deploy
   * (capture-apis.ts); without it no description is read.
   */
  readonly captureApi?: ApiReader;
}

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
  readonly #queues = new Map<string, Promise<void>>();
  /** Settles once restore() is done (at once when it never runs). */
  #restored: Promise<void> = Promise.resolve();
  #serial = 1;
  /** Aborted when shutdown() begins: no transition starts, no unit starts, no build is waited for. */
  readonly #stopping = new AbortController();
  #shutdown: Promise<void> | undefined;
  /** Units submitted to the driver and not stopped since: what a shutdown must stop, serving or still starting. */
  readonly #submitted = new Set<string>();

  constructor(options: DeploymentManagerOptions) {
    this.#options = options;
  }

  list(): Deployment[] {
    return [...this.#live.values()].map((live) => this.#describe(live));
  }

  get(ref: DeploymentRef): Deployment | null {
    const live = this.#live.get(deploymentId(ref));
    return live ? this.#describe(live) : null;
  }

  async deploy(request: DeployRequest, progress: (event: DeployProgress) => void = () => {}): Promise<Deployment> {
    const spec = await this.#options.plugins.sequential('authorizeDeploy', request.spec, {
      workspace: request.workspace,
      stage: request.stage,
      principal: request.principal,
    });
    const ref: DeploymentRef = { workspace: request.workspace, app: spec.name, stage: request.stage };
    const logs = this.#options.logs;
    const built = request.workload === undefined ? spec.workloads.map((w) => w.name) : [request.workload];
    const withBuildLog = logs === undefined ? progress : (event: DeployProgress) => {
      // The image is the app's: its build lines go to each workload this deploy starts.
      if (event.type === 'image' && event.status === 'log') for (const workload of built) logs.addBuildLine({ ...ref, workload }, event.line);
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
    const spec = await this.#options.plugins.sequential('authorizeDeploy', request.spec, { workspace: request.workspace, stage: request.stage, principal: request.principal, dryRun: true });
    const ref: DeploymentRef = { workspace: request.workspace, app: spec.name, stage: request.stage };
    const previous = this.#live.get(deploymentId(ref));
    const targets = request.workload === undefined ? spec.workloads : [workloadOf(spec, request.workload)];
    await this.#checkSecrets(ref, targets);
    const served = targets.filter(isServed);
    const { entries } = routeEntriesFor(ref, served, this.#baseDomain);
    this.#options.routes.assertFree(entries.filter((entry) => !previous?.workloads.has(entry.workload.name)));
    const { source } = await this.#code(spec, request, () => {});
    // The keys the deploy would take next (nothing is taken: the plan changes nothing).
    const units = served.map((workload, i) => ({ workload, source, key: servingUnitKey(ref, workload.name, this.#serial + i) }));
    const removed = request.prune && request.workload === undefined && previous ? [...previous.workloads.keys()].filter((name) => !spec.workloads.some((w) => w.name === name)) : [];
    return planDeploy({ images: this.#options.images, driver: this.#options.driver, progress: () => {} }, {
      ref, baseUrl: this.#options.baseUrl(), units, removed,
      targets: targets.map((w) => ({ name: w.name, kind: w.kind, route: isServed(w) ? w.http?.route ?? null : null, deployed: previous?.workloads.has(w.name) ?? false })),
    });
  }

  async #deploy(ref: DeploymentRef, spec: AppSpec, request: DeployRequest, progress: (event: DeployProgress) => void): Promise<Deployment> {
    const { routes, driver } = this.#options;
    const previous = this.#live.get(deploymentId(ref));
    const targets = request.workload === undefined ? spec.workloads : [workloadOf(spec, request.workload)];
    // Before anything changes: a secret the workspace does not have fails the deploy, naming it.
    await this.#checkSecrets(ref, targets);
    const served = targets.filter(isServed);
    const { entries } = routeEntriesFor(ref, served, this.#baseDomain);
    // Before building or starting anything: a URL taken by another app fails the deploy with nothing to undo.
    routes.assertFree(entries.filter((entry) => !previous?.workloads.has(entry.workload.name)));

    const { source, bundle } = await this.#code(spec, request, progress);
    if (request.inlineSecrets !== undefined) await this.#options.secrets?.putInline(ref, request.inlineSecrets);
    const units = await startUnits(this.#startContext(progress), ref, served.map((workload) => ({ workload, source, key: this.#nextKey(ref, workload.name) })));
    let versions: Map<string, number>;
    try {
      versions = await this.#recordVersions(ref, previous, spec, targets, source, bundle, request.principal);
    } catch (error) {
      await Promise.all(units.map((unit) => driver.remove(unit.key)));
      throw error;
    }
    // Before the switch: nothing but this reaches the new units yet.
    const apis = await captureApis({ read: this.#options.captureApi, records: ref.stage === 'deployed' ? this.#options.records : undefined }, ref, units, versions, previous);

    // The switch: from here on nothing fails. Each route now leads to the new unit (one synchronous step).
    const live: LiveDeployment = previous ?? { ref, entry: spec.entry, sdkVersion: spec.sdkVersion, workloads: new Map(), paused: false, bundle, warnings: [], createdAt: new Date() };
    const unitOf = new Map(units.map((unit) => [unit.workload.name, unit.key]));
    const replaced: string[] = [];
    for (const workload of targets) {
      const before = live.workloads.get(workload.name);
      if (before?.unit) replaced.push(before.unit);
      live.workloads.set(workload.name, {
        workload, source, version: versions.get(workload.name)!, bundleSha256: bundle?.sha256 ?? null,
        status: 'running', unit: unitOf.get(workload.name) ?? null, routeUnit: before?.routeUnit ?? null, failure: null,
        api: apis.get(workload.name) ?? null,
      });
    }
    const wasPaused = live.paused;
    Object.assign(live, { entry: spec.entry, sdkVersion: spec.sdkVersion, paused: false, bundle });
    const warnings = targets.flatMap((workload) => this.#installRoute(live, live.workloads.get(workload.name)!));
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
      await this.#startWorkloads(live, others).catch((error: unknown) => warnings.push(`the app was paused and some workloads could not start again: ${(error as Error).message}`));
    }
    // Old versions drain after the switch: the requests they hold finish there.
    await Promise.all(replaced.map((key) => this.#stopUnit(key)));

    live.warnings = [
      // Without cgroups (not root, no controller), the local driver cannot limit cpu and memory: said once.
      ...unlimitedResources(served, driver.resourceLimits),
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
      const stopping = [...live.workloads.values()].flatMap((lw) => this.#takeDown(live, lw));
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
        await this.#startWorkloads(live, [...live.workloads.values()].filter((lw) => lw.status === 'running' && isServed(lw.workload)));
      } catch (error) {
        // Nothing started: the app is as paused as before.
        await records?.setPaused(ref.workspace, ref.app, true);
        live.paused = true;
        throw error;
      }
      return this.#describe(live);
    });
  }

  /**
   * After a secret changed (`svc secret set --restart`): every running workload of the workspace
   * that uses it gets a new unit, started with the secret's current values, and the old one
   * drains, as a deploy does. Returns `<app>/<workload>` of each, previews included.
   */
  async restartSecretUsers(workspace: string, secret: string): Promise<string[]> {
    const lives = [...this.#live.values()].filter((live) => live.ref.workspace === workspace);
    const restarted = await Promise.all(lives.map((live) => this.#exclusive(live.ref, async () => {
      const users = [...live.workloads.values()].filter((lw) => lw.unit !== null && (lw.workload.secrets ?? []).includes(secret));
      const old = users.map((lw) => lw.unit!);
      for (const lw of users) lw.unit = null;
      try {
        await this.#startWorkloads(live, users);
      } catch (error) {
        // The old units serve on, as before the restart.
        users.forEach((lw, i) => (lw.unit = old[i]!));
        throw error;
      }
      await Promise.all(old.map((key) => this.#stopUnit(key)));
      return users.map((lw) => `${live.ref.app}${live.ref.stage === 'deployed' ? '' : ` (${live.ref.stage})`}/${lw.workload.name}`);
    })));
    return restarted.flat();
  }

  /** Takes one workload offline (its URL answers `deployment_stopped`); a deploy of it starts it again. */
  stopWorkload(ref: DeploymentRef, workload: string): Promise<Deployment> {
    return this.#exclusive(ref, async () => {
      const live = this.#require(ref);
      const lw = this.#requireWorkload(live, workload);
      if (ref.stage === 'deployed') await this.#options.records?.setStatus(ref.workspace, ref.app, workload, 'stopped');
      lw.status = 'stopped';
      await Promise.all(this.#takeDown(live, lw).map((key) => this.#stopUnit(key)));
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
      const stopping = [...live.workloads.values()].flatMap((lw) => this.#unroute(lw));
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
    const running = Promise.all([this.#restored, ...this.#queues.values()]);
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
    const serving = [...this.#live.values()].flatMap((live) => [...live.workloads.values()].flatMap((lw) => this.#takeDown(live, lw)));
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

  /** `work`, unless svc begins to stop first: then it rejects with `shutting_down` at once (the work goes on unobserved). */
  #unlessStopping<T>(work: Promise<T>): Promise<T> {
    return unlessAborted(work, this.#stopping.signal, () => changeRefusedError());
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
    this.#restored = restoring.then(() => {}, () => {});
    return restoring;
  }

  async #restore(adopt: AdoptUnit | undefined): Promise<void> {
    const records = this.#options.records;
    if (!records) return;
    const apps = await records.apps();
    await Promise.all(
      apps.map((app) => {
        const ref: DeploymentRef = { workspace: app.workspace, app: app.name, stage: 'deployed' };
        // Not through #exclusive: every other transition waits for the whole restore.
        return (async () => {
          const [stored, apis] = await Promise.all([records.deployments(app.workspace, app.name), records.apis(app.workspace, app.name)]);
          const versions = stored.map((record) => ({ record, version: currentVersion(record) }));
          const first = versions[0]?.version;
          const live: LiveDeployment = {
            ref, entry: first?.entry ?? '', sdkVersion: first?.sdkVersion ?? '', workloads: new Map(), paused: app.paused, bundle: null, warnings: [], createdAt: new Date(app.createdAt),
          };
          for (const { record, version } of versions) {
            live.workloads.set(record.workload, {
              workload: version.workload, version: version.version, bundleSha256: version.bundleSha256, source: { root: version.sourceRoot, entry: version.entry },
              status: record.status, unit: null, routeUnit: null, failure: null,
              api: version.workload.kind === 'asgi' ? restoredApi(apis.get(record.workload), version.version) : null,
            });
          }
          this.#live.set(deploymentId(ref), live);
          const toStart = live.paused ? [] : [...live.workloads.values()].filter((lw) => lw.status === 'running' && isServed(lw.workload));
          for (const lw of live.workloads.values()) if (!toStart.includes(lw)) this.#installRoute(live, lw);
          await this.#startWorkloads(live, toStart, adopt).catch((error: unknown) => {
            // Cut short by shutdown(): not a failure, and the routes answer shutting_down.
            if (!this.#closing) this.#options.report?.(error);
            for (const lw of toStart) {
              lw.failure = this.#closing ? null : notRestoredError(ref, lw.workload.name, error);
              this.#installRoute(live, lw);
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
    const units = await startUnits(this.#startContext(() => {}), live.ref, wanted);
    units.forEach((unit, i) => {
      const lw = down[i]!;
      lw.unit = unit.key;
      lw.failure = null;
      this.#installRoute(live, lw);
      this.#options.autoscaler?.manage(unit);
    });
  }

  async #deleteWorkload(live: LiveDeployment, name: string): Promise<void> {
    const { ref } = live;
    if (ref.stage === 'deployed') await this.#options.records?.deleteDeployment(ref.workspace, ref.app, name);
    const lw = live.workloads.get(name)!;
    live.workloads.delete(name);
    await Promise.all(this.#unroute(lw).map((key) => this.#stopUnit(key)));
    this.#options.logs?.forget({ ...ref, workload: name });
  }

  /**
   * Puts the route a workload's state calls for in place of the one it had,
   * in one synchronous step: requests see the old route or the new one, never
   * none. Returns warnings about its host-based URL.
   */
  #installRoute(live: LiveDeployment, lw: LiveWorkload): string[] {
    // A workload that is no longer served (a redeploy made it a function) has no URL: its old route goes.
    if (!isServed(lw.workload)) {
      if (lw.routeUnit !== null) this.#options.routes.removeUnit(lw.routeUnit);
      lw.routeUnit = null;
      return [];
    }
    const { ref } = live;
    const name = lw.workload.name;
    const offline = live.paused
      ? appPausedError(ref)
      : lw.status === 'stopped'
        ? deploymentStoppedError(ref, name)
        : this.#closing
          ? shuttingDownError(ref, name)
          : lw.unit === null ? (lw.failure ?? undefined) : undefined;
    const unit = lw.unit ?? unitKey(ref, name);
    const { entry, warning } = routeEntryFor(ref, lw.workload, this.#baseDomain, unit, offline);
    if (lw.routeUnit !== null) this.#options.routes.removeUnit(lw.routeUnit);
    const taken = this.#options.routes.add([entry]);
    lw.routeUnit = unit;
    return [...(warning === null ? [] : [warning]), ...hostTakenWarnings(taken)];
  }

  /** Sets the workload's offline route; returns the unit that served it, to be stopped. */
  #takeDown(live: LiveDeployment, lw: LiveWorkload): string[] {
    const serving = lw.unit;
    lw.unit = null;
    this.#installRoute(live, lw);
    return serving === null ? [] : [serving];
  }

  /** Removes the workload's route; returns the unit that served it, to be stopped. */
  #unroute(lw: LiveWorkload): string[] {
    if (lw.routeUnit !== null) this.#options.routes.removeUnit(lw.routeUnit);
    lw.routeUnit = null;
    const serving = lw.unit;
    lw.unit = null;
    return serving === null ? [] : [serving];
  }

  async #recordVersions(
    ref: DeploymentRef, previous: LiveDeployment | undefined, spec: AppSpec, targets: readonly Workload[], source: SourceRef, bundle: BundleInfo | null, principal: Principal | null,
  ): Promise<Map<string, number>> {
    const records = this.#options.records;
    if (ref.stage === 'deployed' && records) {
      const added = targets.map((workload) => ({
        bundleSha256: bundle?.sha256 ?? null, sourceRoot: source.root, entry: spec.entry, sdkVersion: spec.sdkVersion, workload, createdBy: principal?.subject ?? null,
      }));
      return records.addVersions(ref.workspace, ref.app, added);
    }
    // Previews keep their version count in memory only.
    return new Map(targets.map((workload) => [workload.name, (previous?.workloads.get(workload.name)?.version ?? 0) + 1]));
  }

  async #code(spec: AppSpec, request: DeployRequest, progress: (event: DeployProgress) => void): Promise<{ source: SourceRef; bundle: BundleInfo | null }> {
    const { bundles } = this.#options;
    if (request.bundleSha256 !== undefined) {
      if (!bundles) throw new SvcError('internal', 'this platform keeps no bundles, so it cannot deploy one by its sha256');
      const prepared = await bundles.fromStore(request.bundleSha256, spec.entry);
      progress({ type: 'bundle', status: 'ready', bundle: prepared.bundle });
      return prepared;
    }
    if (!request.source) throw new SvcError('internal', 'a deploy needs a project folder or a bundle sha256');
    if (!bundles) return { source: request.source, bundle: null };
    progress({ type: 'bundle', status: 'packing', root: request.source.root });
    const prepared = await bundles.prepare(request.source);
    progress({ type: 'bundle', status: 'ready', bundle: prepared.bundle });
    return prepared;
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
    if (parsed?.serial === undefined || parsed.workspace !== ref.workspace || parsed.app !== ref.app || parsed.stage !== ref.stage || parsed.workload !== workload) return undefined;
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

  #startContext(progress: (event: DeployProgress) => void): StartContext {
    const { images, driver, routable, secrets } = this.#options;
    const secretEnv = secrets === undefined ? undefined : (ref: DeploymentRef, workload: Workload) => secrets.environment(ref, workload.secrets ?? []);
    // Once svc stops, no start waits for its image and no unit starts.
    return guardedStart({ images, driver, progress, ...(routable ? { routable } : {}), ...(secretEnv ? { secretEnv } : {}) }, this.#stopping.signal, () => changeRefusedError(), {
      submitted: (key) => this.#submitted.add(key),
      removed: (key) => this.#submitted.delete(key),
    });
  }

  get #baseDomain(): string | null {
    return this.#options.baseDomain ?? null;
  }

  #require(ref: DeploymentRef): LiveDeployment {
    const live = this.#live.get(deploymentId(ref));
    if (!live) throw new SvcError('not_found', `no ${ref.stage === 'deployed' ? 'app' : 'preview of'} ${ref.app} in workspace ${ref.workspace}.`);
    return live;
  }

  #requireWorkload(live: LiveDeployment, workload: string): LiveWorkload {
    const lw = live.workloads.get(workload);
    if (!lw) throw new SvcError('not_found', `no deployment ${live.ref.app}/${workload} in workspace ${live.ref.workspace}.`);
    return lw;
  }

  async #stopped(ref: DeploymentRef): Promise<void> {
    await this.#options.plugins.parallel('onEvent', { type: 'deployment.stopped', workspace: ref.workspace, app: ref.app, stage: ref.stage });
  }

  #describe(live: LiveDeployment): Deployment {
    return describeDeployment(live, { baseUrl: this.#options.baseUrl(), routes: this.#options.routes });
  }

  /**
   * One transition of an app at a time, in the order asked; a failed one does
   * not block the next. Once svc stops, none starts (not even one queued),
   * and one the stop cut short fails with `shutting_down`.
   */
  #exclusive<T>(ref: DeploymentRef, run: () => Promise<T>): Promise<T> {
    if (this.#closing) return Promise.reject(changeRefusedError());
    const id = deploymentId(ref);
    const result = (this.#queues.get(id) ?? this.#restored)
      .then(() => {
        if (this.#closing) throw changeRefusedError();
        return run();
      })
      .catch((error: unknown) => {
        throw this.#closing && !(error instanceof SvcError && error.code === 'shutting_down') ? changeRefusedError(error) : error;
      });
    const settled = result.then(() => {}, () => {});
    this.#queues.set(id, settled);
    void settled.then(() => {
      if (this.#queues.get(id) === settled) this.#queues.delete(id);
    });
    return result;
  }
}

/** The description kept for an ASGI workload, when it was read from the version it runs. */
function restoredApi(capture: ApiCapture | undefined, version: number): ApiOutcome {
  if (capture === undefined || capture.version !== version) return { capture: null, message: `no OpenAPI description was read at the deploy of version ${version}` };
  return { capture, message: `OpenAPI description captured from ${capture.source} at the deploy of version ${version}` };
}

/** How long shutdown() waits for transitions already running before it stops what they started (they wait for no image build). */
const TRANSITIONS_WAIT_MS = 30_000;

function workloadOf(spec: AppSpec, name: string): Workload {
  const workload = spec.workloads.find((w) => w.name === name);
  if (!workload) {
    throw new SvcError('not_found', `the app ${spec.name} has no workload ${name}.`, { hint: `Its workloads: ${spec.workloads.map((w) => w.name).join(', ') || '(none)'}.` });
  }
  return workload;
}

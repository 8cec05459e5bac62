/**
 * The autoscaler: owns the timing of scaling and calls the driver. A pure
 * policy (a plugin's) says how many containers a unit wants; the controller
 * starts them at once when requests queue, stops idle ones after keep_warm
 * (least recently used first, drained first), replaces crashed ones with
 * back-off and tells admission when a unit is crash-looping.
 */
import { addUse, containersThatFit, NO_USE, quotaExceeded, useOf, type QuotaUse, type WorkspaceQuota } from '../../model/quotas.js';
import type { SvcError } from '../../model/errors.js';
import type { ScalingSpec, Workload } from '../../model/workload/types.js';
import type { Admission, UnitSupervisor } from '../../traffic/gateway/types.js';
import type { RecentLogs } from '../../infra/logs/recent-logs.js';
import type { PlatformMetrics } from '../../infra/metrics/platform-metrics.js';
import type { RegisteredPolicy } from '../../infra/plugin/host.js';
import type { PlatformEvent, ScalingPolicy } from '../../infra/plugin/types.js';
import type { ContainerStatus, DeploymentUnit, LogSink, SchedulerDriver } from '../../infra/scheduler/types.js';
import { containerUse } from './activity.js';
import { CrashTracker, defaultCrashPolicy, type CrashPolicy } from './crash-tracker.js';
import { idleContainersToStop } from './idle-containers.js';
import { decide, scalingInput } from './policy.js';
import type { PeerLoadView, UnitScalingStatus } from './types.js';
import { crashLoopError, gpuWaitError, noCapacityError, removedError, startingError } from './wait-errors.js';
import { gpuWaitText } from './gpu-wait.js';

export interface AutoscalerOptions {
  readonly driver: SchedulerDriver;
  readonly admission: Admission;
  /** The policy config `scalingPolicy` names (see resolvePolicy()). */
  readonly policy: RegisteredPolicy;
  /** Decides when the policy throws or answers nonsense: the built-in queue-depth. */
  readonly fallback: ScalingPolicy;
  /** Where the units' last log lines are kept, for status(). */
  readonly logs?: RecentLogs;
  /** Where the controller's own lines go (scale-downs, back-off, crash loops): the platform's log sink. */
  readonly log?: LogSink;
  /** Container events, for the plugins' onEvent. */
  readonly emit?: (event: PlatformEvent) => void;
  /** Policy failures and unexpected errors. */
  readonly report?: (error: unknown) => void;
  /** How often every unit is evaluated besides the evaluations queued requests cause (default 1 s). */
  readonly tickMs?: number;
  /** The quota in force for a workspace (core/services/workspaces/quota-book.ts): a scale-up stops at it; absent: none. */
  readonly quotaOf?: (workspace: string) => WorkspaceQuota | null;
  readonly crash?: Partial<CrashPolicy>;
  /** How long stopping a unit waits for its requests in flight before it stops the containers anyway (default 30 s). */
  readonly drainTimeoutMs?: number;
  /**
   * Whether this svc replica scales (it holds the leader lock); default always.
   * A replica that does not lead decides nothing: the leader's autoscaler does.
   */
  readonly leads?: () => boolean;
  /**
   * The other replicas' gateways (several svc replicas): their requests in
   * flight and queued count like this admission's, and a container they use
   * stays warm.
   */
  readonly peers?: PeerLoadView;
  /** Counts scale events and times cold starts (`/metrics`). */
  readonly metrics?: PlatformMetrics;
}

interface Managed {
  /** Replaced when its scaling bounds change (`retune`). */
  unit: DeploymentUnit;
  /** Set while a quota keeps it from starting the containers it wants: what requests get when it has none. */
  quotaBlocked?: SvcError | null;
  readonly crash: CrashTracker;
  /** Containers seen healthy, and since when (ms). */
  readonly healthySince: Map<string, number>;
  /** A request was refused for want of a container since the last start: it wants one. */
  demand: boolean;
  /** A container failed and none became healthy since: start one at a time. */
  probing: boolean;
  desired: number;
  policyReported: boolean;
  retry: NodeJS.Timeout | undefined;
  /** When a start began with no container active (a cold start), until one is healthy (ms, performance.now()). */
  coldSince: number | undefined;
}

const STATUS_LOG_LINES = 50;
const isActive = (c: ContainerStatus) => c.state === 'starting' || c.state === 'healthy';

export class Autoscaler implements UnitSupervisor {
  readonly #options: AutoscalerOptions;
  readonly #crashPolicy: CrashPolicy;
  readonly #units = new Map<string, Managed>();
  readonly #pending = new Set<string>();
  #flush: NodeJS.Immediate | undefined;
  readonly #ticker: NodeJS.Timeout;
  readonly #detach: () => void;

  constructor(options: AutoscalerOptions) {
    this.#options = options;
    this.#crashPolicy = { ...defaultCrashPolicy, ...options.crash };
    this.#ticker = setInterval(() => {
      for (const key of this.#units.keys()) this.#evaluate(key);
    }, options.tickMs ?? 1000);
    this.#ticker.unref();
    this.#detach = options.admission.supervise(this);
  }

  get policy(): string {
    return this.#options.policy.name;
  }

  /** Takes over a deployed unit (its first containers already healthy). */
  manage(unit: DeploymentUnit): void {
    this.#units.set(unit.key, {
      unit,
      crash: new CrashTracker(this.#crashPolicy),
      healthySince: new Map(),
      demand: false,
      probing: false,
      desired: 0,
      policyReported: false,
      retry: undefined,
      coldSince: undefined,
    });
    this.#evaluate(unit.key);
  }

  /**
   * New scaling bounds for a managed unit (`svc deployment scale`): `prepare` first tells the scheduler
   * (a Nomad job's Scaling block must allow a count before it is asked for), then they apply at once.
   * The unit as now scaled; null when it is not managed (any more).
   */
  async retune(key: string, scaling: ScalingSpec, prepare?: (unit: DeploymentUnit) => Promise<void>): Promise<DeploymentUnit | null> {
    const managed = this.#units.get(key);
    if (managed === undefined) return null;
    const unit = { ...managed.unit, workload: { ...managed.unit.workload, scaling } };
    await prepare?.(unit);
    if (this.#units.get(key) !== managed) return null;
    managed.unit = unit;
    this.#evaluate(key);
    return unit;
  }

  /**
   * Stops a unit for good (its deployment is removed or replaced): no more
   * scaling, queued requests get 503, requests in flight finish (for at most
   * the drain timeout), then every container stops.
   */
  async stopUnit(key: string): Promise<void> {
    const { driver, admission } = this.#options;
    const managed = this.#units.get(key);
    this.#units.delete(key);
    if (managed?.retry) clearTimeout(managed.retry);
    admission.rejectQueued(key, removedError());
    const containers = driver.status(key);
    const instanceIds = containers.flatMap((c) => c.workers.map((w) => w.instanceId));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      admission.drain(instanceIds),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#options.drainTimeoutMs ?? 30_000))),
    ]);
    clearTimeout(timer);
    await driver.remove(key);
    admission.forget(instanceIds);
    this.#options.logs?.forget(key);
    if (managed) for (const c of containers) this.#emit(managed, 'container.stopped', c.id, 'the deployment stopped');
  }

  /** A healthy container exited on its own (wired to the driver's onContainerExit). */
  containerExited(key: string, containerId: string, reason: string): void {
    const managed = this.#units.get(key);
    if (!managed) return;
    const now = Date.now();
    const since = managed.healthySince.get(containerId);
    managed.healthySince.delete(containerId);
    this.#emit(managed, 'container.failed', containerId, reason);
    this.#failed(managed, `container ${containerId} ${reason}`, now, since === undefined ? undefined : now - since);
  }

  status(key: string): UnitScalingStatus | null {
    const managed = this.#units.get(key);
    if (!managed) return null;
    const { driver, admission, logs, peers } = this.#options;
    const containers = driver.status(key).map((c) => {
      const { inFlight, lastActiveAt } = containerUse(c, admission, peers);
      return {
        id: c.id,
        state: c.state,
        startedAt: c.startedAt,
        inFlight,
        lastActiveAt: lastActiveAt === undefined ? null : new Date(lastActiveAt),
        ...(c.gpu === undefined ? {} : { gpu: c.gpu }),
      };
    });
    const serving = containers.some((c) => c.state === 'healthy');
    const starting = containers.some((c) => c.state === 'starting') || managed.retry !== undefined;
    const { crash } = managed;
    return {
      unit: key,
      policy: this.policy,
      state: serving ? 'ready' : crash.crashLooping ? 'crash_loop' : starting ? 'starting' : 'idle',
      desired: managed.desired,
      containers,
      ...this.#load(key),
      failures: crash.failures,
      backoffMs: crash.backoffMs,
      lastExit: crash.lastExit,
      recentLogs: logs?.lines(key, STATUS_LOG_LINES) ?? [],
    };
  }

  /** Evaluates these units soon rather than at the next tick (the other replicas' load changed). */
  evaluate(units: readonly string[]): void {
    for (const unit of units) if (this.#units.has(unit)) this.#schedule(unit);
  }

  close(): void {
    clearInterval(this.#ticker);
    if (this.#flush) clearImmediate(this.#flush);
    for (const managed of this.#units.values()) if (managed.retry) clearTimeout(managed.retry);
    this.#units.clear();
    this.#detach();
  }

  // UnitSupervisor: called by admission on the request path, synchronously.

  manages(unit: string): boolean {
    return this.#units.has(unit);
  }

  queued(unit: string): void {
    this.#schedule(unit);
  }

  refused(unit: string): void {
    const managed = this.#units.get(unit);
    if (!managed) return;
    managed.demand = true;
    this.#schedule(unit);
  }

  refusal(unit: string): ReturnType<UnitSupervisor['refusal']> {
    const managed = this.#units.get(unit);
    if (!managed) return null;
    if (managed.crash.crashLooping) return crashLoopError(managed.crash.failures, managed.crash.lastExit, managed.crash.waitMs(Date.now()));
    // A quota keeps it at zero: waiting would not help; the client tries again later (429, Retry-After).
    if (managed.quotaBlocked && !this.#options.driver.status(unit).some(isActive)) return managed.quotaBlocked;
    return null;
  }

  /**
   * What the workspace's containers use now, over every unit this autoscaler manages; `releasing` units
   * (those a deploy replaces) are left out.
   */
  quotaUse(workspace: string, releasing: readonly string[] = []): QuotaUse {
    let use = NO_USE;
    for (const [key, managed] of this.#units) {
      if (managed.unit.ref.workspace !== workspace || releasing.includes(key)) continue;
      const active = this.#options.driver.status(key).filter(isActive).length;
      use = addUse(use, useOf(managed.unit.workload.resources, active));
    }
    return use;
  }

  /**
   * `quota_exceeded` (403) when starting `count` containers of each workload beside what the workspace runs,
   * less the `releasing` units (those a deploy replaces), would pass its quota; null when it fits or has none.
   */
  quotaRefusal(
    workspace: string,
    starting: readonly { readonly workload: Workload; readonly count: number }[],
    releasing: readonly string[],
  ): SvcError | null {
    const quota = this.#options.quotaOf?.(workspace) ?? null;
    if (quota === null) return null;
    const adding = starting.reduce((sum, { workload, count }) => addUse(sum, useOf(workload.resources, count)), NO_USE);
    return quotaExceeded(workspace, quota, this.quotaUse(workspace, releasing), adding, false);
  }

  /** How many of `wanted` new containers the workspace's quota lets start; when fewer, why, kept for refusal(). */
  #withinQuota(managed: Managed, wanted: number): number {
    managed.quotaBlocked = null; // what refusal() says comes from this evaluation, not an earlier one
    const { ref, workload } = managed.unit;
    const quota = this.#options.quotaOf?.(ref.workspace) ?? null;
    if (quota === null || wanted <= 0) return wanted;
    const used = this.quotaUse(ref.workspace);
    const each = useOf(workload.resources, 1);
    const fit = Math.min(wanted, containersThatFit(quota, used, each));
    managed.quotaBlocked = fit < wanted ? quotaExceeded(ref.workspace, quota, used, useOf(workload.resources, wanted), true) : null;
    if (fit < wanted) this.#log(managed, `${workload.name}: ${managed.quotaBlocked!.message}`);
    return fit;
  }

  waitError(unit: string, waitedMs: number): ReturnType<UnitSupervisor['waitError']> {
    const managed = this.#units.get(unit);
    if (managed?.crash.crashLooping)
      return crashLoopError(managed.crash.failures, managed.crash.lastExit, managed.crash.waitMs(Date.now()));
    const starting =
      managed && (managed.demand || managed.retry !== undefined || this.#options.driver.status(unit).some((c) => c.state === 'starting'));
    const gpu = starting ? this.waitReason(unit) : null;
    if (gpu !== null) return gpuWaitError(waitedMs, gpu);
    return starting ? startingError(waitedMs) : noCapacityError(waitedMs);
  }

  /** Why the unit's requests wait besides its containers being busy or starting: one of its containers waits for a GPU (gpu-wait.ts). */
  waitReason(unit: string): string | null {
    const gpus = this.#options.driver.gpus?.();
    return gpus === undefined ? null : gpuWaitText(unit, gpus);
  }

  /** One evaluation per unit per turn of the event loop, however many requests queued in it. */
  #schedule(key: string): void {
    this.#pending.add(key);
    this.#flush ??= setImmediate(() => {
      this.#flush = undefined;
      const keys = [...this.#pending];
      this.#pending.clear();
      for (const pending of keys) this.#evaluate(pending);
    });
  }

  #evaluate(key: string): void {
    const managed = this.#units.get(key);
    if (!managed || this.#options.leads?.() === false) return;
    const { driver, policy, fallback, peers } = this.#options;
    const now = Date.now();
    const active = driver.status(key).filter(isActive);
    this.#noteHealthy(managed, active, now);
    const { scaling } = managed.unit.workload;
    const decision = decide(policy, fallback, scalingInput(managed.unit, this.#load(key), active.length), scaling.bufferContainers ?? 0);
    if (decision.error && !managed.policyReported) {
      managed.policyReported = true;
      this.#options.report?.(decision.error);
    }
    const { maxContainers } = managed.unit.workload.scaling.autoscaler;
    // A request waiting on another replica cannot call refused() here: at zero it wants a container, whatever the policy says.
    const demand = managed.demand || (active.length === 0 && (peers?.load(key).queued ?? 0) > 0);
    managed.desired = demand ? Math.max(decision.desired, Math.min(1, maxContainers)) : decision.desired;
    if (managed.desired > active.length) this.#scaleUp(managed, active, now);
    else if (managed.desired < active.length) this.#scaleDown(managed, active, now);
  }

  /** Requests in flight and queued for a unit, on this replica and the others. */
  #load(key: string): { inFlight: number; queued: number } {
    const local = this.#options.admission.load(key);
    const peer = this.#options.peers?.load(key);
    return peer ? { inFlight: local.inFlight + peer.inFlight, queued: local.queued + peer.queued } : local;
  }

  /** Records containers that became healthy: each ends a crash loop, and one healthy long enough clears the failures. */
  #noteHealthy(managed: Managed, active: readonly ContainerStatus[], now: number): void {
    let oldest = now;
    for (const c of active) {
      if (c.state !== 'healthy') continue;
      let since = managed.healthySince.get(c.id);
      if (since === undefined) {
        managed.healthySince.set(c.id, (since = c.healthyAt?.getTime() ?? now));
        managed.crash.healthy();
        managed.probing = false;
        this.#emit(managed, 'container.started', c.id);
        this.#coldStartEnded(managed);
      }
      oldest = Math.min(oldest, since);
    }
    managed.crash.observeHealthy(now - oldest);
  }

  #scaleUp(managed: Managed, active: readonly ContainerStatus[], now: number): void {
    const key = managed.unit.key;
    // After a failure, probe with one container rather than failing several at once.
    if (managed.probing && active.some((c) => c.state === 'starting')) return;
    const wait = managed.crash.waitMs(now);
    if (wait > 0) {
      managed.retry ??= setTimeout(() => {
        managed.retry = undefined;
        this.#evaluate(key);
      }, wait).unref();
      return;
    }
    const wanted = managed.probing ? 1 : managed.desired - active.length;
    const count = this.#withinQuota(managed, wanted);
    if (count <= 0) {
      // At zero, the requests waiting would only time out: they get the quota's 429 now.
      if (active.length === 0 && managed.quotaBlocked) this.#options.admission.rejectQueued(managed.unit.key, managed.quotaBlocked);
      return;
    }
    managed.demand = false;
    if (active.length === 0) managed.coldSince ??= performance.now();
    this.#options.metrics?.scaled(managed.unit.ref, managed.unit.workload.name, 'up', count);
    this.#options.driver.scale(key, active.length + count).then(
      () => this.#evaluate(key),
      (error: unknown) => {
        if (this.#units.get(key) !== managed) return; // stopped meanwhile: not a failure of the workload
        const { message, details } = error as { message?: string; details?: { container?: string } };
        const reason = String(message ?? error)
          .split('\n')[0]!
          .replace(/\.$/, '');
        this.#emit(managed, 'container.failed', details?.container ?? '', reason);
        this.#failed(managed, reason, Date.now());
      },
    );
  }

  /** Stops idle containers, least recently used first, only while there are more than desired. */
  #scaleDown(managed: Managed, active: readonly ContainerStatus[], now: number): void {
    const { driver, admission, peers } = this.#options;
    const healthy = active.filter((c) => c.state === 'healthy');
    const activity = healthy.map((c) => {
      const { inFlight, lastActiveAt } = containerUse(c, admission, peers);
      // Never used: idle since it became healthy.
      return { id: c.id, inFlight, lastActiveAt: Math.max((c.healthyAt ?? c.startedAt).getTime(), lastActiveAt ?? 0) };
    });
    const chosen = idleContainersToStop(
      activity,
      active.length - managed.desired,
      now,
      managed.unit.workload.scaling.keepWarmSeconds * 1000,
    );
    if (chosen.length > 0) this.#options.metrics?.scaled(managed.unit.ref, managed.unit.workload.name, 'down', chosen.length);
    for (const id of chosen) {
      const instanceIds = healthy.find((c) => c.id === id)!.workers.map((w) => w.instanceId);
      // Same synchronous step as the idle check above: no request can take a slot on it any more.
      void admission.drain(instanceIds);
      managed.healthySince.delete(id);
      // It served until idle: whatever failed before, the unit works now (even within the stable window).
      managed.crash.stoppedIdle();
      this.#log(
        managed,
        `stopping container ${id} of ${managed.unit.workload.name}: idle for keep_warm (${managed.unit.workload.scaling.keepWarmSeconds} s)`,
        id,
      );
      driver.stop(managed.unit.key, id).then(
        () => {
          admission.forget(instanceIds);
          this.#emit(managed, 'container.stopped', id, `idle for keep_warm (${managed.unit.workload.scaling.keepWarmSeconds} s)`);
        },
        (error: unknown) => {
          // Stopped meanwhile (svc stops, the deployment went): the unit's own stop takes the container down.
          if (this.#units.get(managed.unit.key) !== managed) return;
          this.#options.report?.(error);
        },
      );
    }
  }

  #failed(managed: Managed, reason: string, now: number, healthyForMs?: number): void {
    const key = managed.unit.key;
    const loopStarted = managed.crash.failed(reason, now, healthyForMs);
    managed.probing = true;
    const serving = this.#options.driver.status(key).some((c) => c.state === 'healthy');
    // Waiting would be in vain for minutes: answer every queued request now.
    if (managed.crash.crashLooping && !serving) {
      this.#options.admission.rejectQueued(key, crashLoopError(managed.crash.failures, managed.crash.lastExit, managed.crash.waitMs(now)));
    }
    const retry = `next start in ${managed.crash.backoffMs / 1000} s at the earliest, when requests or min_containers need one`;
    if (loopStarted)
      this.#log(
        managed,
        `${managed.unit.workload.name} is crash-looping: its container exited ${managed.crash.failures} times in a row (last: ${reason}); requests get 503 crash_loop; ${retry}`,
      );
    else this.#log(managed, `${managed.unit.workload.name}: container failure ${managed.crash.failures} in a row (${reason}); ${retry}`);
    this.#evaluate(key);
  }

  /** The first container of a cold start is healthy: its time, from the start to now, goes to the metrics. */
  #coldStartEnded(managed: Managed): void {
    if (managed.coldSince === undefined) return;
    this.#options.metrics?.coldStart(managed.unit.ref, managed.unit.workload.name, (performance.now() - managed.coldSince) / 1000);
    managed.coldSince = undefined;
  }

  #log(managed: Managed, text: string, container = ''): void {
    this.#options.log?.({ unit: managed.unit.key, container, stream: 'system', text, time: new Date() });
  }

  #emit(
    managed: Managed,
    type: 'container.started' | 'container.stopped' | 'container.failed',
    containerId: string,
    reason?: string,
  ): void {
    const { ref, workload } = managed.unit;
    this.#options.emit?.({
      type,
      workspace: ref.workspace,
      app: ref.app,
      workload: workload.name,
      containerId,
      ...(reason === undefined ? {} : { reason }),
    });
  }
}

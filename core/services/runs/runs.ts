/**
 * Remote runs (docs/api.md "Remote runs": `.remote()` and `svc run`): an ephemeral start of
 * one function of an app from a manifest and an uploaded bundle. Creating a
 * run answers at once and builds the image and starts the first container in
 * the background (build lines go to the run's logs); calls wait until it is
 * ready (the first remote call waits for the build), then pass through the
 * gateway's admission (capacity, FIFO queue, 429 at max_pending_tasks) to a
 * container, and stream their frames back. The autoscaler scales and heals
 * the run like any deployment. A run ends when its client deletes it, when
 * it has been idle for its timeout, or when svc stops; nothing of it is durable.
 */
import { DEFAULT_RUN_LIMITS, type RunLimits } from './limits.js';
import { randomBytes } from 'node:crypto';
import type { CodeBundles } from '../../infra/bundles/types.js';
import type { UnitScaler } from '../deployments/manager.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import { changeRefusedError } from '../deployments/offline.js';
import { guardedStart, unlessAborted } from '../deployments/guarded-start.js';
import { startUnits } from '../deployments/start-units.js';
import type { DeployProgress } from '../deployments/types.js';
import { bindClassParameters } from '../../model/workload/class-parameters.js';
import { SvcError, isSvcError } from '../../model/errors.js';
import type { Admission, UpstreamPools } from '../../traffic/gateway/types.js';
import { callLimitOf } from '../../model/call-timeout.js';
import type { ImageBuilder } from '../../infra/images/types.js';
import type { DeploymentLogKey, DeploymentLogs } from '../../infra/logs/deployment-logs.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import type { Principal } from '../../model/principal.js';
import type { DeploymentUnit, SchedulerDriver } from '../../infra/scheduler/types.js';
import type { InlineScope, SecretEnvironment } from '../secrets/types.js';
import type { VolumeMounting } from '../volumes/types.js';
import type { AppSpec, Workload } from '../../model/workload/types.js';
import { collect, dropBody, type CallBody } from './call-body.js';
import { sendCall } from './call-stream.js';
import { callWithRetries } from './retries.js';
import { retryUnsent } from './unsent-retry.js';
import type { IdleLeases } from './idle-leases.js';
import type { CallAnswer, CallOptions, RunAttachment, RunStatus, RunView } from './types.js';

/** How long svc, when it stops, waits for runs still building or starting. */
const START_WAIT_MS = 30_000;

export interface RunManagerOptions {
  readonly plugins: Pick<PluginHost, 'sequential'>;
  readonly images: ImageBuilder;
  readonly driver: SchedulerDriver;
  readonly bundles: Pick<CodeBundles, 'fromStore'>;
  readonly autoscaler: UnitScaler;
  /** The workspaces' secrets, for functions that name some; absent: none are checked or given. */
  readonly secrets?: SecretEnvironment;
  /** The workspaces' volumes, for functions that mount some; absent: such a run is refused. */
  readonly volumes?: VolumeMounting;
  readonly admission: Pick<Admission, 'enter'>;
  readonly upstreams: Pick<UpstreamPools, 'dispatch' | 'crashCause'>;
  readonly logs: Pick<DeploymentLogs, 'addBuildLine' | 'add' | 'forget' | 'subscriberCount'>;
  readonly leases: IdleLeases;
  /** Failures nobody waits for (stopping an idle run). */
  readonly report: (error: unknown) => void;
  /** Absent: DEFAULT_RUN_LIMITS. */
  readonly limits?: RunLimits;
}

export interface CreateRun {
  readonly spec: AppSpec;
  readonly bundleSha256: string;
  readonly workspace: string;
  readonly function: string;
  readonly principal: Principal | null;
  readonly idleTimeoutSeconds: number;
  /** The app's `svc.Secret.from_dict` values (workloads name them `@<i>`), kept sealed for this run only. */
  readonly inlineSecrets?: readonly Readonly<Record<string, string>>[];
  /** Whose secret values the run reads, in place of its own: a scheduled run reads its deployed app's (`@<i>` are the deploy's). */
  readonly secretScope?: InlineScope;
  /** For an `@app.cls` class: its parameters' values, as the request gave them (checked here); a run per set of values. */
  readonly parameters?: unknown;
  /** For `svc shell`: a container of any kind of workload, to open a terminal in rather than to call. */
  readonly shell?: boolean;
}

interface Run {
  readonly id: string;
  readonly workspace: string;
  readonly workload: Workload;
  readonly unitKey: string;
  readonly logKey: DeploymentLogKey;
  readonly idleTimeoutSeconds: number;
  readonly createdAt: Date;
  status: RunStatus;
  failure: SvcError | null;
  /** Settles when the run is ready (or failed: then it rejects with the failure). */
  readonly ready: Promise<void>;
  /** `ready`, or rejected at once when the run ends: what calls wait for (one listener on `stop` for them all). */
  readonly startedOrEnded: Promise<void>;
  /** Aborted when the run ends: its start stops, calls waiting for it stop waiting. */
  readonly stop: AbortController;
  /** Settles when the background start is over (ready, failed, or given up because the run ended). */
  starting: Promise<void>;
  /** Set when the start is over; until then, an end leaves the clean-up to the start. */
  settled: boolean;
  /** Set once its unit is handed to the autoscaler: what `end` must stop. */
  started: boolean;
  ended: boolean;
  inFlight: number;
  /** Calls waiting for the build or start, bounded like the admission queue. */
  waiting: number;
  completed: number;
  /** Whether the run's maps still need it (RunManager.attach). */
  readonly holders: Set<() => boolean>;
}

export class RunManager {
  readonly #options: RunManagerOptions;
  readonly #runs = new Map<string, Run>();
  /** Calls waiting for their run to start or for a slot on its containers, by `<workspace>/<request id>`, oldest first. */
  readonly #queued = new Map<string, Run>();
  #closed = false;

  constructor(options: RunManagerOptions) {
    this.#options = options;
  }

  /** Starts a run of `request.function`; answers at once with its view (status `building`). */
  async create(request: CreateRun): Promise<RunView> {
    if (this.#closed) throw changeRefusedError();
    const spec = await this.#options.plugins.sequential('authorizeDeploy', request.spec, {
      workspace: request.workspace,
      stage: 'run',
      principal: request.principal,
    });
    if (this.#closed) throw changeRefusedError(); // svc began to stop while the plugins decided
    const workload = withParameters(
      request.shell ? workloadNamed(spec, request.function) : functionOf(spec, request.function),
      request.parameters,
    );
    // Like a deploy: a secret the workspace does not have refuses the run before anything starts.
    if ((workload.secrets ?? []).length > 0) await this.#options.secrets?.check(request.workspace, workload.secrets!);
    const mounted = (workload.volumes ?? []).map((mount) => mount.volume);
    if (mounted.length > 0) await this.#options.volumes?.check(request.workspace, mounted);
    this.#checkLimits(request.workspace, spec.name, workload);
    // A run starts a container of its own at once: the workspace's quota holds for it as for a deploy.
    const refusal = this.#options.autoscaler.quotaRefusal(request.workspace, [{ workload, count: 1 }], []);
    if (refusal) throw refusal;
    const id = `run-${randomBytes(8).toString('hex')}`;
    const ref: DeploymentRef = { workspace: request.workspace, app: spec.name, stage: 'run' };
    let markReady!: () => void;
    let markFailed!: (error: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => ((markReady = resolve), (markFailed = reject)));
    ready.catch(() => {}); // calls read the failure; a run nobody calls must not crash svc
    const stop = new AbortController();
    // The run ending meanwhile (its client, or svc stopping) answers its waiting calls at once rather than after the build.
    const startedOrEnded = unlessAborted(ready, stop.signal, () => this.#endedError(id));
    startedOrEnded.catch(() => {});
    const run: Run = {
      stop,
      startedOrEnded,
      starting: Promise.resolve(),
      settled: false,
      id,
      workspace: request.workspace,
      workload,
      unitKey: `${request.workspace}/${spec.name}/${id}/${workload.name}`,
      logKey: { workspace: request.workspace, app: spec.name, stage: id, workload: workload.name },
      idleTimeoutSeconds: request.idleTimeoutSeconds,
      createdAt: new Date(),
      status: 'building',
      failure: null,
      ready,
      started: false,
      ended: false,
      inFlight: 0,
      waiting: 0,
      completed: 0,
      holders: new Set(),
    };
    this.#runs.set(id, run);
    this.#options.leases.hold(id, {
      timeoutMs: request.idleTimeoutSeconds * 1000,
      busy: () =>
        run.inFlight > 0 ||
        run.waiting > 0 ||
        run.status === 'building' ||
        run.status === 'starting' ||
        this.#options.logs.subscriberCount(run.logKey) > 0 ||
        [...run.holders].some((busy) => busy()),
      expire: () => void this.#end(run, 'idle').catch(this.#options.report),
    });
    const start = this.#start(run, ref, request.bundleSha256, spec.entry, request.inlineSecrets, request.secretScope);
    start.then(markReady, markFailed);
    run.starting = start.then(
      () => {},
      () => {},
    );
    return this.#view(run);
  }

  /** Every live run's containers, for `svc usage`: its app and function, unit, memory= and the calls it answered so far. */
  meteredUnits(): { ref: DeploymentRef; workload: string; unit: string; memoryMiB: number; calls: number }[] {
    return [...this.#runs.values()]
      .filter((run) => !run.ended)
      .map((run) => ({
        ref: { workspace: run.workspace, app: run.logKey.app, stage: 'run' as const },
        workload: run.workload.name,
        unit: run.unitKey,
        memoryMiB: run.workload.resources.memoryMiB,
        calls: run.completed,
      }));
  }

  list(workspace: string): RunView[] {
    return [...this.#runs.values()].filter((run) => run.workspace === workspace).map((run) => this.#view(run));
  }

  /** `too_many_runs` when the workspace holds as many runs as it may, or the class as many sets of parameters. */
  #checkLimits(workspace: string, app: string, workload: Workload): void {
    const limits = this.#options.limits ?? DEFAULT_RUN_LIMITS;
    const mine = [...this.#runs.values()].filter((run) => run.workspace === workspace && !run.ended);
    if (mine.length >= limits.perWorkspace) {
      throw new SvcError(
        'too_many_runs',
        `the workspace ${workspace} already holds ${mine.length} remote runs, the most it may hold at once.`,
        {
          hint: 'End runs you no longer use (DELETE /api/v1/runs/<id>); idle ones end by themselves after their idle timeout. The operator sets the bound (maxRunsPerWorkspace).',
          details: { runs: mine.length, limit: limits.perWorkspace },
        },
      );
    }
    const bound = workload.class?.bound;
    if (bound === undefined) return;
    const key = JSON.stringify(bound);
    const sets = new Set(
      mine
        .filter((run) => run.logKey.app === app && run.workload.name === workload.name && run.workload.class?.bound !== undefined)
        .map((run) => JSON.stringify(run.workload.class!.bound)),
    );
    if (!sets.has(key) && sets.size >= limits.parameterSetsPerClass) {
      throw new SvcError(
        'too_many_runs',
        `the class ${workload.name} of ${app} already runs ${sets.size} sets of parameters in the workspace ${workspace}, the most one class may run at once.`,
        {
          hint: 'Reuse a set of values already running, end runs of others (DELETE /api/v1/runs/<id>; idle ones end by themselves), or ask the operator to raise classParameterSets.',
          details: { sets: sets.size, limit: limits.parameterSetsPerClass },
        },
      );
    }
  }

  /** `run <id> (<function>)` of each run of the workspace whose function mounts `volume`. */
  volumeUsers(workspace: string, volume: string): string[] {
    return [...this.#runs.values()]
      .filter((run) => run.workspace === workspace && !run.ended && (run.workload.volumes ?? []).some((m) => m.volume === volume))
      .map((run) => `run ${run.id} (${run.workload.name})`);
  }

  get(workspace: string, id: string): RunView {
    const run = this.#require(workspace, id);
    this.#options.leases.touch(id);
    return this.#view(run);
  }

  /** Where the run's logs are kept (build lines, container output): the logs API reads and follows this key. */
  logKey(workspace: string, id: string): DeploymentLogKey {
    const run = this.#require(workspace, id);
    this.#options.leases.touch(id);
    return run.logKey;
  }

  /**
   * One call: waits until the run is ready (the first call waits for the
   * build), takes a slot through admission, and streams the container's
   * answer. Fails with the run's failure when it could not start.
   */
  async call(
    workspace: string,
    id: string,
    body: CallBody,
    signal: AbortSignal,
    requestId: string,
    options: CallOptions = {},
  ): Promise<CallAnswer> {
    let answered = false;
    try {
      const run = this.#require(workspace, id);
      const maxPendingTasks = options.maxPending ?? run.workload.scaling.maxPendingTasks;
      const limits = { maxPending: maxPendingTasks, ...(options.waitTimeout === false ? { waitTimeout: false } : {}) };
      if (run.status !== 'ready' && run.status !== 'failed' && run.waiting >= maxPendingTasks) {
        throw new SvcError(
          'queue_full',
          `${run.workload.name} already has ${run.waiting} calls waiting for the run to start (max_pending_tasks).`,
          { headers: { 'Retry-After': '1' } },
        );
      }
      run.inFlight++;
      this.#options.leases.touch(id);
      const queuedKey = `${workspace}/${requestId}`;
      try {
        this.#queued.set(queuedKey, run);
        // A ready run needs no wait (nor a listener on its end per call: a map sends its whole window at once).
        if (run.status !== 'ready') await this.#untilReady(run, signal);
        if (run.ended) throw this.#endedError(id);
        const attempt = (callBody: CallBody): Promise<CallAnswer> =>
          retryUnsent(
            async () => {
              let slot;
              // A retry queues again, behind the calls that came meanwhile.
              if (!this.#queued.has(queuedKey)) this.#queued.set(queuedKey, run);
              try {
                slot = await this.#options.admission.enter(run.unitKey, limits, signal);
              } catch (error) {
                // Queued when the run ended: the run is gone, not busy (a 503 would invite retries).
                throw run.ended ? this.#endedError(id) : error;
              } finally {
                this.#queued.delete(queuedKey);
              }
              return sendCall(this.#options.upstreams, slot, callBody, signal, requestId, callLimitOf(run.workload), options.contentType);
            },
            Buffer.isBuffer(callBody),
            signal,
          );
        const { retries } = run.workload;
        const answer =
          retries && retries.maxRetries > 0
            ? await callWithRetries({
                retries,
                workload: run.workload.name,
                body: Buffer.isBuffer(body) ? body : await collect(body),
                attempt,
                signal,
                log: (text) => this.#system(run, text),
              })
            : await attempt(body);
        answered = true;
        let counted = false;
        const done = () => {
          if (counted) return;
          counted = true;
          run.inFlight--;
          run.completed++;
          this.#options.leases.touch(id);
        };
        answer.body.on('end', done);
        answer.body.on('close', done);
        return answer;
      } finally {
        this.#queued.delete(queuedKey);
        if (!answered) {
          run.inFlight--;
          this.#options.leases.touch(id);
        }
      }
    } finally {
      if (!answered) dropBody(body);
    }
  }

  /**
   * Why the call sent with this request id waits, while it waits for its run's container because
   * one of the run's containers waits for a GPU: what the GPUs are doing (gpu-wait.ts) and how many
   * of the run's calls wait ahead of it. Null when it does not wait so (or is not a call of this
   * workspace's runs).
   */
  waitReason(workspace: string, requestId: string): string | null {
    const run = this.#queued.get(`${workspace}/${requestId}`);
    if (run === undefined) return null;
    const reason = this.#options.autoscaler.waitReason?.(run.unitKey) ?? null;
    if (reason === null) return null;
    let ahead = 0;
    for (const [key, queued] of this.#queued) {
      if (key === `${workspace}/${requestId}`) break;
      if (queued === run) ahead++;
    }
    return `${reason}; ${ahead === 0 ? 'first of its calls in the queue' : `${ahead} of its calls ${ahead === 1 ? 'waits' : 'wait'} ahead of it`}`;
  }

  /** Why the run's calls wait for its containers (see waitReason), when some do; null otherwise. */
  runWaitReason(workspace: string, id: string): string | null {
    const run = this.#runs.get(id);
    if (run === undefined || run.workspace !== workspace) return null;
    return this.#options.autoscaler.waitReason?.(run.unitKey) ?? null;
  }

  /**
   * What a map of the run (core/services/maps) works with: its function, and
   * `ended`, aborted when the run ends. While `busy()` says so the run does
   * not idle (a map waiting for its client's next inputs has no call in
   * flight); `release()` when the map is over. Counts as using the run.
   */
  attach(workspace: string, id: string, busy: () => boolean): RunAttachment {
    const run = this.#require(workspace, id);
    this.#options.leases.touch(id);
    run.holders.add(busy);
    return {
      app: run.logKey.app,
      workload: run.workload,
      unitKey: run.unitKey,
      logKey: run.logKey,
      ended: run.stop.signal,
      release: () => {
        if (run.holders.delete(busy)) this.#options.leases.touch(id);
      },
    };
  }

  /** Waits for the run's start (the first call waits for the build), counted in `waiting`. */
  async #untilReady(run: Run, signal: AbortSignal): Promise<void> {
    run.waiting++;
    try {
      await unlessAborted(run.startedOrEnded, signal, clientGone);
    } finally {
      run.waiting--;
    }
  }

  /** Ends the run: its containers stop (calls in flight finish first), its logs go. */
  async end(workspace: string, id: string): Promise<void> {
    await this.#end(this.#require(workspace, id), 'ended by its client');
  }

  /**
   * svc is stopping: new runs are refused, every run ends (calls waiting for
   * a start get `shutting_down`), and starts in progress are waited for (at
   * most `START_WAIT_MS`: an image build may take minutes), so that none
   * starts a container after svc stopped the others.
   */
  async shutdown(): Promise<void> {
    this.#closed = true;
    const runs = [...this.#runs.values()];
    await Promise.all(runs.map((run) => this.#end(run, 'svc is stopping')));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, START_WAIT_MS)));
    await Promise.race([Promise.all(runs.map((run) => run.starting)), bound]);
    clearTimeout(timer);
  }

  /** A `system` line in the run's logs; none once it ended (that would bring its forgotten log back). */
  #system(run: Run, text: string): void {
    if (!run.ended) this.#options.logs.add(run.logKey, { time: new Date().toISOString(), container: 'run', stream: 'system', text });
  }

  async #start(
    run: Run,
    ref: DeploymentRef,
    bundleSha256: string,
    entry: string,
    inlineSecrets: CreateRun['inlineSecrets'],
    secretScope: CreateRun['secretScope'],
  ): Promise<void> {
    const { logs } = this.#options;
    const { signal } = run.stop;
    const system = (text: string) => this.#system(run, text);
    const progress = (event: DeployProgress) => {
      if (event.type === 'image' && event.status === 'log') void (run.ended || logs.addBuildLine(run.logKey, event.line));
      else if (event.type === 'image' && event.status !== 'building')
        system(`image ${event.imageId} ${event.status === 'cached' ? 'ready (cached)' : 'built'}`);
      else if (event.type === 'workload' && event.status === 'starting') {
        run.status = 'starting';
        system(`starting ${run.workload.name}`);
      }
    };
    let unit: DeploymentUnit | undefined;
    try {
      // The run's end stops the start at its next step: no waiting for the image, no container started after it.
      const ended = () => noRun(run.id);
      const { source } = await unlessAborted(this.#options.bundles.fromStore(bundleSha256, entry), signal, ended);
      const { secrets } = this.#options;
      // A run's inline values are its own (scope: the run's id), whatever other runs of the app send.
      const scope = secretScope ?? { workspace: run.workspace, app: ref.app, stage: run.id };
      if (secrets !== undefined && inlineSecrets !== undefined) await secrets.putInline(scope, inlineSecrets);
      const secretEnv =
        secrets === undefined
          ? {}
          : { secretEnv: (_ref: DeploymentRef, workload: Workload) => secrets.environment(scope, workload.secrets ?? []) };
      const { images, driver, volumes } = this.#options;
      const context = guardedStart({ images, driver, progress, ...secretEnv, ...(volumes ? { volumes } : {}) }, signal, ended);
      [unit] = await startUnits(context, ref, [{ workload: run.workload, source, key: run.unitKey }]);
      // Managed even when the run just ended: stopping it through the autoscaler drains it and drops its recent lines.
      this.#options.autoscaler.manage(unit!);
      if (run.ended) return;
      run.started = true;
      run.status = 'ready';
      system(`${run.workload.name} is ready`);
    } catch (error) {
      if (run.ended) return; // its end cut the start short: nobody waits for this failure
      run.status = 'failed';
      run.failure = isSvcError(error)
        ? error
        : new SvcError('container_failed', `the run could not start: ${(error as Error).message}`, { cause: error });
      system(`the run failed: ${run.failure.message}`);
      throw run.failure;
    } finally {
      run.settled = true;
      // The run ended while this start was under way and left the clean-up to it.
      if (run.ended) await this.#cleanUp(run, unit !== undefined);
    }
  }

  async #end(run: Run, reason: string): Promise<void> {
    if (run.ended) return;
    run.ended = true;
    run.stop.abort();
    this.#runs.delete(run.id);
    this.#options.leases.release(run.id);
    this.#options.logs.add(run.logKey, {
      time: new Date().toISOString(),
      container: 'run',
      stream: 'system',
      text: `the run ended (${reason})`,
    });
    // A start still under way stops at its next step and cleans up then (#start's finally).
    if (run.settled) await this.#cleanUp(run, run.started);
  }

  /** Stops the run's unit (calls in flight finish first), then drops its logs: nothing of it is left. */
  async #cleanUp(run: Run, hasUnit: boolean): Promise<void> {
    try {
      if (hasUnit) await this.#options.autoscaler.stopUnit(run.unitKey);
    } finally {
      this.#options.logs.forget(run.logKey);
      await this.#options.secrets?.forgetInline({ workspace: run.workspace, app: run.logKey.app, stage: run.id });
    }
  }

  /** What a call that ran into the run's end gets: 404, or `shutting_down` when svc is stopping. */
  #endedError(id: string): SvcError {
    return this.#closed ? changeRefusedError() : noRun(id);
  }

  #require(workspace: string, id: string): Run {
    const run = this.#runs.get(id);
    // Another workspace's run is as unknown as one that never was.
    if (!run || run.workspace !== workspace) throw noRun(id);
    return run;
  }

  #view(run: Run): RunView {
    return {
      id: run.id,
      app: run.logKey.app,
      function: run.workload.name,
      status: run.status,
      failure: run.failure && { code: run.failure.code, message: run.failure.message },
      calls: { inFlight: run.inFlight, completed: run.completed },
      idleTimeoutSeconds: run.idleTimeoutSeconds,
      expiresAt: (this.#options.leases.expiresAt(run.id) ?? new Date()).toISOString(),
      createdAt: run.createdAt.toISOString(),
      ...(run.workload.class?.bound === undefined ? {} : { parameters: run.workload.class.bound }),
    };
  }
}

/** The workload a run of `workload` starts: for a class, with the values of its parameters bound (its containers' instances get them). */
function withParameters(workload: Workload, given: unknown): Workload {
  if (workload.class === undefined) {
    if (given === undefined || given === null) return workload;
    throw new SvcError('bad_request', `${workload.name} is a function, not an @app.cls class: it takes no "parameters".`, {
      hint: 'Leave "parameters" out of the request.',
    });
  }
  return { ...workload, class: { ...workload.class, bound: bindClassParameters(workload, given) } };
}

/** The workload `name` of any kind (a shell's run): `not_found` listing the app's workloads. */
export function workloadNamed(spec: AppSpec, name: string): Workload {
  const workload = spec.workloads.find((w) => w.name === name);
  if (workload) return workload;
  throw new SvcError('not_found', `the app ${spec.name} has no workload ${name}.`, {
    hint: `Its workloads: ${spec.workloads.map((w) => w.name).join(', ') || '(none)'}.`,
  });
}

/** The function `name` of the app: `not_found` listing its functions, `bad_request` for another kind of workload. */
export function functionOf(spec: AppSpec, name: string): Workload {
  const workload = spec.workloads.find((w) => w.name === name);
  const functions = spec.workloads.filter((w) => w.kind === 'function').map((w) => w.name);
  if (!workload) {
    throw new SvcError('not_found', `the app ${spec.name} has no function ${name}.`, {
      hint: `Its functions: ${functions.join(', ') || '(none)'}.`,
    });
  }
  if (workload.kind !== 'function') {
    throw new SvcError(
      'bad_request',
      `${name} is ${/^[aeiou]/.test(workload.kind) ? 'an' : 'a'} ${workload.kind} workload; remote runs call functions (@app.function()).`,
      {
        hint: `Call ${name} at its URL: deploy it with svc deploy or preview it with svc serve.${functions.length ? ` Functions of ${spec.name}: ${functions.join(', ')}.` : ''}`,
        details: { field: 'function', kind: workload.kind },
      },
    );
  }
  return workload;
}

function noRun(id: string): SvcError {
  return new SvcError('not_found', `there is no run ${id}: it ended (by its client, or after its idle timeout) or never existed.`, {
    hint: 'Start a new one with POST /api/v1/runs.',
  });
}

const clientGone = () => new SvcError('client_closed', 'the client went away while its call waited for the run to start.');

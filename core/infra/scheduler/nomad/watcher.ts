/**
 * Follows one job's allocations with blocking queries on
 * `GET /v1/job/:id/allocations` and keeps what `status()` answers from
 * (the SchedulerDriver's `status` is synchronous). Each allocation's ports
 * come from `GET /v1/allocation/:id` once (the list's stubs have none).
 *
 * State mapping (an allocation is one container):
 * - `DesiredStatus` ≠ `run` and `ClientStatus` pending/running → `stopping`
 * - `ClientStatus` complete/failed/lost → `exited` (left out of `status()`, like
 *   the local driver forgets exited containers)
 * - `pending` → `starting`
 * - `running` → `healthy` once `DeploymentStatus.Healthy` is true, or (jobs
 *   without deployments: svc's groups have `Update.MaxParallel = 0`) once every
 *   worker port answers 200 on the health route; until then `starting`.
 *   Once healthy it stays healthy while running: later health is Consul's
 *   checks, which the registry follows.
 * Workers: one per dynamic port labelled `w<index>` (jobs/names.ts
 * `workerPortLabels`), ordered by index; a job with no such label counts as
 * one container without workers, healthy when running.
 *
 * `changes` emits `change` on every answer and health change. It emits `exit` (with the
 * AllocView) once when an allocation that was healthy ends by itself: it becomes terminal
 * while its `DesiredStatus` is still `run` (it crashed), or it becomes `lost`. Nomad marks a
 * lost allocation `DesiredStatus: stop` itself (`scheduler/reconciler/filters.go`
 * `markStop(lost, …)`). A scale-down, a stop or a job purge sets `DesiredStatus` to `stop`
 * before the client stops the allocation, so those never emit `exit`. Neither does an
 * allocation seen stopping before it was lost.
 */
import { EventEmitter } from 'node:events';
import { SvcError } from '../../../model/errors.js';
import type { ContainerState } from '../types.js';
import type { NomadClient } from './client.js';
import type { Allocation, AllocationStub, AllocatedPort, NomadContainerStatus } from './types.js';

export interface AllocView {
  stub: AllocationStub;
  ports: AllocatedPort[] | undefined;
  healthyAt: Date | undefined;
  /** Seen with `DesiredStatus` ≠ `run` while still running: someone asked it to stop. */
  stopping?: boolean;
  /** `exit` was emitted for it. */
  exited?: boolean;
}

const WORKER_LABEL = /^w(\d+)$/;

export function isTerminal(stub: AllocationStub): boolean {
  return ['complete', 'failed', 'lost'].includes(stub.ClientStatus);
}

export function isLive(stub: AllocationStub): boolean {
  return stub.DesiredStatus === 'run' && !isTerminal(stub);
}

export function workerPorts(ports: readonly AllocatedPort[]): AllocatedPort[] {
  return ports
    .filter((p) => WORKER_LABEL.test(p.Label))
    .sort((a, b) => Number(WORKER_LABEL.exec(a.Label)![1]) - Number(WORKER_LABEL.exec(b.Label)![1]));
}

export interface WatcherOptions {
  readonly client: NomadClient;
  readonly key: string;
  readonly jobId: string;
  /** The task's name (the job's first task), part of the Consul service IDs. */
  readonly task: () => string;
  readonly healthPath: string;
  readonly blockingWaitMs: number;
  readonly probeIntervalMs: number;
}

export class AllocationWatcher {
  readonly allocs = new Map<string, AllocView>();
  readonly changes = new EventEmitter();
  /** The last error of the watch loop (Nomad unreachable…); cleared by the next answer. */
  error: SvcError | undefined;
  /** True once the first answer arrived. */
  loaded = false;
  #index = 0;
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  #probing = false;

  constructor(private readonly options: WatcherOptions) {
    this.changes.setMaxListeners(0);
  }

  start(): void {
    this.#loop ??= this.#run();
    this.#probeTimer ??= setInterval(() => void this.#probe(), this.options.probeIntervalMs);
    this.#probeTimer.unref();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#probeTimer);
    await this.#loop;
  }

  /** Reads the allocations now (not blocking) and applies them. */
  async refresh(): Promise<void> {
    const { body, index } = await this.options.client.get<AllocationStub[] | null>(
      `/v1/job/${encodeURIComponent(this.options.jobId)}/allocations`,
    );
    await this.#apply(body ?? [], index, false);
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        const { body, index } = await this.options.client.get<AllocationStub[] | null>(
          `/v1/job/${encodeURIComponent(this.options.jobId)}/allocations`,
          {},
          { index: this.#index, waitMs: this.options.blockingWaitMs, signal },
        );
        if (signal.aborted) return;
        await this.#apply(body ?? [], index, true);
      } catch (error) {
        if (signal.aborted) return;
        this.error = error instanceof SvcError ? error : new SvcError('scheduler_unreachable', (error as Error).message, { cause: error });
        this.changes.emit('change');
        await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
      }
    }
  }

  async #apply(stubs: AllocationStub[], index: number, fromLoop: boolean): Promise<void> {
    // An index that went backwards (a restarted agent, a snapshot restore): start over (Nomad's blocking-query rule).
    if (fromLoop) this.#index = index < this.#index ? 0 : index;
    this.error = undefined;
    this.loaded = true;
    const seen = new Set<string>();
    const fetches: Promise<void>[] = [];
    for (const stub of stubs) {
      seen.add(stub.ID);
      const view = this.allocs.get(stub.ID);
      if (view) {
        if (stub.ModifyIndex >= view.stub.ModifyIndex) view.stub = stub;
      } else {
        const fresh: AllocView = { stub, ports: undefined, healthyAt: undefined };
        this.allocs.set(stub.ID, fresh);
        if (!isTerminal(stub)) fetches.push(this.#fetchPorts(fresh));
      }
    }
    for (const id of this.allocs.keys()) if (!seen.has(id)) this.allocs.delete(id);
    for (const view of this.allocs.values()) this.#updateHealth(view);
    for (const view of this.allocs.values()) {
      const { stub } = view;
      if (stub.DesiredStatus !== 'run' && !isTerminal(stub)) view.stopping = true;
      const byItself = stub.DesiredStatus === 'run' || (stub.ClientStatus === 'lost' && !view.stopping);
      if (view.exited || view.healthyAt === undefined || !isTerminal(stub) || !byItself) continue;
      view.exited = true;
      this.changes.emit('exit', view);
    }
    this.changes.emit('change');
    await Promise.all(fetches);
  }

  async #fetchPorts(view: AllocView): Promise<void> {
    try {
      const { body } = await this.options.client.get<Allocation>(`/v1/allocation/${encodeURIComponent(view.stub.ID)}`);
      view.ports = body.AllocatedResources?.Shared.Ports ?? [];
    } catch {
      view.ports = undefined; // retried by the prober
    }
    this.#updateHealth(view);
    this.changes.emit('change');
  }

  #updateHealth(view: AllocView): void {
    if (view.stub.ClientStatus !== 'running' || view.stub.DesiredStatus !== 'run') return;
    if (view.healthyAt === undefined && view.stub.DeploymentStatus?.Healthy === true) view.healthyAt = new Date();
    if (view.healthyAt === undefined && view.ports !== undefined && workerPorts(view.ports).length === 0) view.healthyAt = new Date();
  }

  /** Probes the health route of every worker of running allocations not yet healthy. */
  async #probe(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      const pending = [...this.allocs.values()].filter(
        (v) => v.healthyAt === undefined && v.stub.ClientStatus === 'running' && v.stub.DesiredStatus === 'run',
      );
      await Promise.all(
        pending.map(async (view) => {
          if (view.ports === undefined) return this.#fetchPorts(view);
          const ports = workerPorts(view.ports);
          const answers = await Promise.all(ports.map((p) => probe(`http://${hostFor(p.HostIP)}:${p.Value}${this.options.healthPath}`)));
          if (answers.every(Boolean) && view.healthyAt === undefined && view.stub.ClientStatus === 'running') {
            view.healthyAt = new Date();
            this.changes.emit('change');
          }
        }),
      );
    } finally {
      this.#probing = false;
    }
  }

  status(): NomadContainerStatus[] {
    const out: NomadContainerStatus[] = [];
    for (const { stub, ports, healthyAt } of this.allocs.values()) {
      if (isTerminal(stub)) continue;
      let state: ContainerState;
      if (stub.DesiredStatus !== 'run') state = 'stopping';
      else if (stub.ClientStatus === 'running' && healthyAt !== undefined) state = 'healthy';
      else state = 'starting';
      const workers = workerPorts(ports ?? []).map((p, index) => ({
        index,
        pid: undefined,
        // The ID Nomad gives the worker's Consul service, which the Consul registry reports as the instance's.
        instanceId: nomadServiceId(stub.ID, this.options.task(), this.options.jobId, p.Label),
        socketPath: '',
        // Nomad registers the service in Consul itself; the driver knows only that the allocation is healthy.
        registered: state === 'healthy',
        label: p.Label,
        address: `${hostFor(p.HostIP)}:${p.Value}`,
        port: p.Value,
      }));
      out.push({
        id: stub.ID,
        unit: this.options.key,
        state,
        pid: undefined,
        startedAt: new Date(stub.CreateTime / 1e6),
        healthyAt: state === 'healthy' ? healthyAt : undefined,
        startedFrom: 'process',
        workers,
        allocationName: stub.Name,
        clientStatus: stub.ClientStatus,
        desiredStatus: stub.DesiredStatus,
        jobVersion: stub.JobVersion,
      });
    }
    return out.sort((a, b) => a.allocationName.localeCompare(b.allocationName, 'en', { numeric: true }));
  }
}

/**
 * Nomad's Consul service ID of a task service (`client/serviceregistration/id.go`):
 * `_nomad-task-<alloc ID>-<task>-<service name>-<port label>`. The job compiler
 * names every worker's service after the job ID (jobs/compile.ts).
 */
export function nomadServiceId(allocId: string, task: string, service: string, portLabel: string): string {
  return `_nomad-task-${allocId}-${task}-${service}-${portLabel}`;
}

function hostFor(ip: string): string {
  return ip.includes(':') ? `[${ip}]` : ip;
}

async function probe(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

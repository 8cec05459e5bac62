/**
 * The stand-in's state (jobs with versions, evaluations, deployments, allocations, scaling events)
 * behind one raft-like index, and the scheduler that turns group counts into allocations run by
 * AllocRunner on this machine.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import type { ConsulAgentClient } from './consul.js';
import type { ImageSource } from './docker/image-source.js';
import { destructiveChange, type Json } from './job.js';
import { AllocRunner } from './runner.js';
import { Variables } from './variables.js';

export interface ClusterOptions {
  readonly dataDir: string;
  readonly hostIp: string;
  readonly datacenter: string;
  readonly consul: ConsulAgentClient | null;
  readonly imageSource: ImageSource;
}

const NODE_ID = 'f0f0f0f0-0000-4000-8000-000000000001';
const NODE_NAME = 'nomad-standin';

/** The counts of a plan's `DesiredTGUpdates` (structs.DesiredUpdates). */
const DESIRED_UPDATES = [
  'Ignore',
  'Place',
  'Migrate',
  'Stop',
  'InPlaceUpdate',
  'DestructiveUpdate',
  'Canary',
  'Preemptions',
  'Reconnect',
  'Disconnect',
  'RescheduleNow',
  'RescheduleLater',
];

function isTerminal(alloc: Json): boolean {
  return alloc.DesiredStatus !== 'run' || ['complete', 'failed', 'lost'].includes(alloc.ClientStatus);
}

async function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export class Cluster {
  index = 10;
  readonly changes = new EventEmitter();
  /** namespace → job ID → job */
  readonly jobs = new Map<string, Map<string, Json>>();
  readonly versions = new Map<string, Json[]>();
  readonly evals: Json[] = [];
  readonly deployments: Json[] = [];
  readonly allocs = new Map<string, Json>();
  readonly runners = new Map<string, AllocRunner>();
  readonly scalingEvents = new Map<string, Record<string, Json[]>>();
  readonly variables = new Variables();
  private queue: Promise<void> = Promise.resolve();
  private readonly usedPorts = new Set<number>();
  private healthTimer: NodeJS.Timeout;

  constructor(private readonly options: ClusterOptions) {
    this.changes.setMaxListeners(0);
    this.healthTimer = setInterval(() => void this.watchDeployments(), 200);
  }

  /**
   * Raises the raft index for a write. Watchers (blocking queries) hear of it once the
   * write is complete, as Nomad's state store fires its watch sets after the transaction
   * commits: callers assign the index to what they change right after this returns.
   */
  bump(): number {
    this.index += 1;
    queueMicrotask(() => this.changes.emit('change'));
    return this.index;
  }

  job(namespace: string, id: string): Json | undefined {
    return this.jobs.get(namespace)?.get(id);
  }

  key(namespace: string, id: string): string {
    return `${namespace}\0${id}`;
  }

  allocsOf(namespace: string, id: string): Json[] {
    return [...this.allocs.values()].filter((a) => a.Namespace === namespace && a.JobID === id);
  }

  createEval(job: Json, triggeredBy: string, jobModifyIndex: number): Json {
    const now = Date.now() * 1_000_000;
    const index = this.bump();
    const evaluation = {
      ID: randomUUID(),
      Namespace: job.Namespace,
      Priority: job.Priority,
      Type: job.Type,
      TriggeredBy: triggeredBy,
      JobID: job.ID,
      JobModifyIndex: jobModifyIndex,
      NodeID: '',
      NodeModifyIndex: 0,
      DeploymentID: '',
      Status: 'complete',
      StatusDescription: '',
      Wait: 0,
      WaitUntil: null,
      NextEval: '',
      PreviousEval: '',
      BlockedEval: '',
      FailedTGAllocs: null,
      ClassEligibility: null,
      EscapedComputedClass: false,
      AnnotatePlan: false,
      QueuedAllocations: Object.fromEntries((job.TaskGroups ?? []).map((g: Json) => [g.Name, 0])),
      SnapshotIndex: index,
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
    };
    this.evals.push(evaluation);
    return evaluation;
  }

  /** A deployment for a new job version when some group has Update.MaxParallel > 0, as Nomad's deployment watcher makes. */
  maybeCreateDeployment(job: Json, evalId: string): void {
    if (job.Type !== 'service' || job.Stop) return;
    const groups = (job.TaskGroups ?? []).filter((g: Json) => (g.Update?.MaxParallel ?? 0) > 0);
    if (groups.length === 0) return;
    for (const d of this.deployments) {
      if (d.Namespace === job.Namespace && d.JobID === job.ID && ['running', 'paused', 'pending'].includes(d.Status)) {
        d.Status = 'cancelled';
        d.StatusDescription = 'Cancelled due to newer version of job';
        d.ModifyIndex = this.bump();
      }
    }
    const index = this.bump();
    const now = Date.now();
    this.deployments.push({
      ID: randomUUID(),
      Namespace: job.Namespace,
      JobID: job.ID,
      JobVersion: job.Version,
      JobModifyIndex: job.JobModifyIndex,
      JobSpecModifyIndex: job.JobModifyIndex,
      JobCreateIndex: job.CreateIndex,
      IsMultiregion: false,
      TaskGroups: Object.fromEntries(
        groups.map((g: Json) => [
          g.Name,
          {
            AutoRevert: g.Update.AutoRevert,
            AutoPromote: g.Update.AutoPromote,
            ProgressDeadline: g.Update.ProgressDeadline,
            RequireProgressBy: new Date(now + g.Update.ProgressDeadline / 1e6).toISOString(),
            Promoted: false,
            PlacedCanaries: null,
            DesiredCanaries: 0,
            DesiredTotal: g.Count,
            PlacedAllocs: 0,
            HealthyAllocs: 0,
            UnhealthyAllocs: 0,
          },
        ]),
      ),
      Status: 'running',
      StatusDescription: 'Deployment is running',
      EvalPriority: job.Priority,
      CreateIndex: index,
      ModifyIndex: index,
      _evalId: evalId,
    });
  }

  latestDeployment(namespace: string, id: string): Json | undefined {
    return this.deployments.filter((d) => d.Namespace === namespace && d.JobID === id).sort((a, b) => b.CreateIndex - a.CreateIndex)[0];
  }

  /** Reconciles a job's allocations with its groups; serialized so placements never interleave. */
  reconcile(namespace: string, id: string, evalId: string): Promise<void> {
    const next = this.queue.then(() => this.reconcileNow(namespace, id, evalId));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async reconcileNow(namespace: string, id: string, evalId: string): Promise<void> {
    const job = this.job(namespace, id);
    const live = this.allocsOf(namespace, id).filter((a) => !isTerminal(a));
    const stops: Json[] = [];
    const groups = new Map<string, Json>((job?.TaskGroups ?? []).map((g: Json) => [g.Name, g]));
    // What the evaluation's plan did per group (its PlanAnnotations, which Nomad keeps on the evaluation).
    const updates = new Map<string, Record<string, number>>();
    const count = (group: string, what: string) => {
      const of = updates.get(group) ?? Object.fromEntries(DESIRED_UPDATES.map((k) => [k, 0]));
      of[what] = (of[what] ?? 0) + 1;
      updates.set(group, of);
    };
    for (const alloc of live) {
      const group = groups.get(alloc.TaskGroup);
      if (!job || job.Stop || !group) stops.push(alloc);
      else if (alloc.JobVersion !== job.Version) {
        const runner = this.runners.get(alloc.ID);
        if (runner && destructiveChange(runner.group, group)) {
          stops.push(alloc);
          count(alloc.TaskGroup, 'DestructiveUpdate');
        } else {
          alloc.JobVersion = job.Version;
          alloc.Job = job;
          alloc.ModifyIndex = this.bump();
          count(alloc.TaskGroup, 'InPlaceUpdate');
        }
      }
    }
    for (const [name, group] of groups) {
      if (!job || job.Stop) break;
      const kept = live.filter((a) => a.TaskGroup === name && !stops.includes(a)).sort((a, b) => this.allocIndex(a) - this.allocIndex(b));
      while (kept.length > group.Count) {
        stops.push(kept.pop());
        count(name, 'Stop');
      }
      const usedIndexes = new Set(kept.map((a) => this.allocIndex(a)));
      for (let i = 0, placed = kept.length; placed < group.Count; i += 1) {
        if (usedIndexes.has(i)) continue;
        await this.place(job, group, i, evalId);
        count(name, 'Place');
        placed += 1;
      }
      if (!updates.has(name)) count(name, 'Ignore');
    }
    const evaluation = this.evals.find((e) => e.ID === evalId);
    if (evaluation) {
      evaluation.PlanAnnotations = { DesiredTGUpdates: Object.fromEntries(updates), PreemptedAllocs: null };
      evaluation.ModifyIndex = this.bump();
      evaluation.ModifyTime = Date.now() * 1_000_000;
    }
    await Promise.all(
      stops.map((alloc) =>
        this.stopAlloc(alloc, job?.Stop ? 'alloc is not needed since job is stopped' : 'alloc not needed due to job update'),
      ),
    );
  }

  private allocIndex(alloc: Json): number {
    return Number(/\[(\d+)\]$/.exec(alloc.Name)?.[1] ?? 0);
  }

  private async allocatePort(): Promise<number> {
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const port = 20000 + Math.floor(Math.random() * 12001);
      if (this.usedPorts.has(port)) continue;
      if (await portFree(this.options.hostIp, port)) {
        this.usedPorts.add(port);
        return port;
      }
    }
    throw new Error('dynamic port selection failed');
  }

  private async place(job: Json, group: Json, index: number, evalId: string): Promise<void> {
    const ports: Json[] = [];
    const networks: Json[] = [];
    for (const network of group.Networks ?? []) {
      const reserved = (network.ReservedPorts ?? []).map((p: Json) => ({ ...p }));
      const dynamic: Json[] = [];
      for (const p of network.DynamicPorts ?? []) dynamic.push({ ...p, Value: await this.allocatePort() });
      for (const p of [...reserved, ...dynamic]) ports.push({ Label: p.Label, Value: p.Value, To: p.To ?? 0, HostIP: this.options.hostIp });
      networks.push({ ...network, IP: this.options.hostIp, ReservedPorts: reserved, DynamicPorts: dynamic });
    }
    const deployment = this.latestDeployment(job.Namespace, job.ID);
    const activeDeployment =
      deployment && deployment.Status === 'running' && deployment.JobVersion === job.Version && deployment.TaskGroups[group.Name];
    const now = Date.now() * 1_000_000;
    const idx = this.bump();
    const alloc: Json = {
      ID: randomUUID(),
      Namespace: job.Namespace,
      EvalID: evalId,
      Name: `${job.ID}.${group.Name}[${index}]`,
      NodeID: NODE_ID,
      NodeName: NODE_NAME,
      JobID: job.ID,
      Job: job,
      JobType: job.Type,
      JobVersion: job.Version,
      TaskGroup: group.Name,
      AllocatedResources: {
        Tasks: Object.fromEntries(
          (group.Tasks ?? []).map((t: Json) => [
            t.Name,
            {
              Cpu: { CpuShares: t.Resources.CPU, ReservedCores: null },
              Memory: { MemoryMB: t.Resources.MemoryMB, MemoryMaxMB: t.Resources.MemoryMaxMB },
              Networks: null,
              Devices: null,
            },
          ]),
        ),
        TaskLifecycles: null,
        Shared: { DiskMB: group.EphemeralDisk.SizeMB, Networks: networks, Ports: ports },
      },
      DesiredStatus: 'run',
      DesiredDescription: '',
      DesiredTransition: {},
      ClientStatus: 'pending',
      ClientDescription: '',
      TaskStates: {},
      DeploymentID: activeDeployment ? deployment.ID : '',
      DeploymentStatus: null,
      FollowupEvalID: '',
      NextAllocation: '',
      PreviousAllocation: '',
      RescheduleTracker: null,
      PreemptedAllocations: null,
      PreemptedByAllocation: '',
      CreateIndex: idx,
      ModifyIndex: idx,
      AllocModifyIndex: idx,
      CreateTime: now,
      ModifyTime: now,
    };
    if (activeDeployment) deployment.TaskGroups[group.Name].PlacedAllocs += 1;
    this.allocs.set(alloc.ID, alloc);
    const runner = new AllocRunner(alloc, job, group, {
      dataDir: this.options.dataDir,
      datacenter: this.options.datacenter,
      nodeName: NODE_NAME,
      consul: this.options.consul,
      imageSource: this.options.imageSource,
      variables: this.variables,
      changed: () => {
        alloc.ModifyIndex = this.bump();
        alloc.ModifyTime = Date.now() * 1_000_000;
      },
    });
    this.runners.set(alloc.ID, runner);
    runner.start();
  }

  async stopAlloc(alloc: Json, description: string): Promise<void> {
    alloc.DesiredStatus = 'stop';
    alloc.DesiredDescription = description;
    alloc.ModifyIndex = this.bump();
    const runner = this.runners.get(alloc.ID);
    if (runner) await runner.stop();
    for (const p of alloc.AllocatedResources.Shared.Ports) this.usedPorts.delete(p.Value);
  }

  /** Marks allocations healthy once running for MinHealthyTime (and their Consul checks pass), and completes deployments. */
  private async watchDeployments(): Promise<void> {
    for (const deployment of this.deployments) {
      if (deployment.Status !== 'running') continue;
      const job = this.job(deployment.Namespace, deployment.JobID);
      if (!job) continue;
      const statuses = this.options.consul ? await this.options.consul.checkStatuses() : {};
      let changed = false;
      let done = true;
      for (const [name, state] of Object.entries<Json>(deployment.TaskGroups)) {
        const group = job.TaskGroups.find((g: Json) => g.Name === name);
        const allocs = [...this.allocs.values()].filter((a) => a.DeploymentID === deployment.ID && a.TaskGroup === name);
        for (const alloc of allocs) {
          if (alloc.DeploymentStatus?.Healthy !== undefined && alloc.DeploymentStatus?.Healthy !== null) continue;
          const runner = this.runners.get(alloc.ID);
          const started = Math.max(...Object.values<Json>(alloc.TaskStates).map((s) => (s.StartedAt ? Date.parse(s.StartedAt) : Infinity)));
          const checksPass =
            group?.Update?.HealthCheck !== 'checks' ||
            !this.options.consul ||
            (runner?.checkIds ?? []).every((id) => statuses[id] === 'passing');
          let healthy: boolean | null = null;
          if (alloc.ClientStatus === 'failed') healthy = false;
          else if (alloc.ClientStatus === 'running' && Date.now() - started >= (group?.Update?.MinHealthyTime ?? 0) / 1e6 && checksPass)
            healthy = true;
          else if (Date.now() - alloc.CreateTime / 1e6 > (group?.Update?.HealthyDeadline ?? Infinity) / 1e6) healthy = false;
          if (healthy !== null) {
            const idx = this.bump();
            alloc.DeploymentStatus = { Healthy: healthy, Timestamp: new Date().toISOString(), Canary: false, ModifyIndex: idx };
            alloc.ModifyIndex = idx;
            if (healthy) state.HealthyAllocs += 1;
            else state.UnhealthyAllocs += 1;
            changed = true;
          }
        }
        if (state.UnhealthyAllocs > 0) {
          deployment.Status = 'failed';
          deployment.StatusDescription = 'Failed due to unhealthy allocations';
          changed = true;
        }
        if (state.HealthyAllocs < state.DesiredTotal) done = false;
      }
      if (deployment.Status === 'running' && done) {
        deployment.Status = 'successful';
        deployment.StatusDescription = 'Deployment completed successfully';
        job.Stable = true;
        changed = true;
      }
      if (changed) deployment.ModifyIndex = this.bump();
    }
  }

  async close(): Promise<void> {
    clearInterval(this.healthTimer);
    await this.queue.catch(() => undefined);
    await Promise.all(
      [...this.allocs.values()]
        .filter((a) => !isTerminal(a) || a.ClientStatus === 'running')
        .map((a) => this.stopAlloc(a, 'stand-in closed')),
    );
  }
}

export { isTerminal, NODE_ID, NODE_NAME };

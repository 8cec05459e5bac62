/** The HTTP API of the Nomad stand-in (paths and semantics of hashicorp/nomad command/agent/*_endpoint.go). */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Cluster, isTerminal } from './cluster.js';
import { ConsulAgentClient } from './consul.js';
import type { ImageSource } from './docker/image-source.js';
import { RegistryImageSource } from './docker/registry-image-source.js';
import { decodeGoJson, GoDecodeError, type GoType } from './gojson.js';
import { canonicalizeJob, multierror, parseGoDuration, sameJson, specOf, validateJob, type Json } from './job.js';
import { JobPlanRequestType, JobRegisterRequestType, JobValidateRequestType, ScalingRequestType } from './schema.js';
import { isPeriodicParent, PeriodicDispatcher } from './periodic.js';
import { diffJobs, planAnnotations } from './plan.js';
import { allocation, allocStub, evaluation } from './render.js';

export interface NomadStandinOptions {
  /** Consul agent HTTP address; when set, services of running allocations are registered there. */
  readonly consulUrl?: string;
  readonly consulToken?: string;
  /** Alloc dirs go to `<dataDir>/alloc/<alloc id>`. */
  readonly dataDir: string;
  /** When set, every request needs this token in X-Nomad-Token or `Authorization: Bearer`. */
  readonly aclToken?: string;
  /**
   * Reject unknown JSON keys (400 `json: unknown field "X"`). Default true: stricter than a real
   * server, which silently ignores them (api.Job decoding), so that a typo cannot pass in tests.
   */
  readonly strictDecode?: boolean;
  readonly region?: string;
  readonly datacenter?: string;
  readonly namespaces?: readonly string[];
  readonly hostIp?: string;
  readonly port?: number;
  /** The docker driver's image source; default: pulled from registries (OCI distribution API), blobs cached under `<dataDir>/docker/blobs`. */
  readonly docker?: { readonly imageSource?: ImageSource };
}

export interface NomadStandin {
  readonly url: string;
  readonly cluster: Cluster;
  /** Errors the stand-in met talking to Consul. */
  readonly consulErrors: readonly string[];
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_WAIT_MS = 300_000;

export async function startNomadStandin(options: NomadStandinOptions): Promise<NomadStandin> {
  const region = options.region ?? 'global';
  const namespaces = new Set(['default', ...(options.namespaces ?? [])]);
  const strict = options.strictDecode ?? true;
  const consul = options.consulUrl ? new ConsulAgentClient(options.consulUrl, options.consulToken) : null;
  const cluster = new Cluster({
    dataDir: path.resolve(options.dataDir),
    hostIp: options.hostIp ?? '127.0.0.1',
    datacenter: options.datacenter ?? 'dc1',
    consul,
    imageSource: options.docker?.imageSource ?? new RegistryImageSource(path.join(path.resolve(options.dataDir), 'docker', 'blobs')),
  });

  // Periodic parents launch a child job per tick, placed like any batch job (periodic.ts).
  const periodic = new PeriodicDispatcher({
    launch(child) {
      const namespace = child.Namespace;
      const index = cluster.bump();
      const stored: Json = {
        ...child,
        Dispatched: false,
        Status: 'pending',
        StatusDescription: '',
        Stable: false,
        Version: 0,
        SubmitTime: Date.now() * 1_000_000,
        CreateIndex: index,
        ModifyIndex: index,
        JobModifyIndex: index,
      };
      cluster.jobs.get(namespace)!.set(stored.ID, stored);
      cluster.versions.set(cluster.key(namespace, stored.ID), [stored]);
      const evaluation = cluster.createEval(stored, 'periodic-job', index);
      void cluster.reconcile(namespace, stored.ID, evaluation.ID);
    },
    running(namespace, parentId) {
      return [...(cluster.jobs.get(namespace)?.values() ?? [])].some((job) => job.ParentID === parentId && statusOf(job) !== 'dead');
    },
  });

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      if (!res.headersSent) {
        res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
      }
      res.end((error as Error).message);
    });
  });

  async function body(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async function decode(req: IncomingMessage, type: GoType): Promise<Json> {
    try {
      return decodeGoJson(await body(req), type, strict);
    } catch (error) {
      if (error instanceof GoDecodeError) throw new HttpError(400, error.message);
      throw error;
    }
  }

  /** A query's answer: `setMeta` (index, known leader, last contact) when it has an index. */
  function send(res: ServerResponse, value: unknown, index?: number): void {
    if (index !== undefined) setMeta(res, index);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(value, (key, v) => (key.startsWith('_') ? undefined : v)));
  }

  /** A write's answer: `setIndex` only (command/agent/job_endpoint.go), as Nomad 1.11.3 answered register, plan, scale and deregister. */
  function sendWrite(res: ServerResponse, value: unknown, index: number): void {
    res.setHeader('X-Nomad-Index', String(index));
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(value, (key, v) => (key.startsWith('_') ? undefined : v)));
  }

  function setMeta(res: ServerResponse, index: number): void {
    res.setHeader('X-Nomad-Index', String(index));
    res.setHeader('X-Nomad-KnownLeader', 'true');
    res.setHeader('X-Nomad-LastContact', '0');
  }

  /** A query whose object is gone: Nomad sets the query meta before its 404 (jobQuery, allocQuery…), as 1.11.3 answered. */
  function notFound(res: ServerResponse, index: number, text: string): never {
    setMeta(res, index);
    throw new HttpError(404, text);
  }

  /** A blocking query: waits until `indexOf()` exceeds ?index= or ?wait= passes, as Nomad's blocking queries do. */
  async function blocking(req: IncomingMessage, url: URL, indexOf: () => number): Promise<void> {
    const wait = url.searchParams.get('wait');
    const indexText = url.searchParams.get('index');
    let waitMs = MAX_WAIT_MS;
    if (wait) {
      const ns = parseGoDuration(wait);
      if (ns === null) throw new HttpError(400, 'Invalid wait time');
      waitMs = Math.min(ns / 1e6, MAX_WAIT_MS) || MAX_WAIT_MS;
    }
    let min = 0;
    if (indexText) {
      if (!/^\d+$/.test(indexText)) throw new HttpError(400, 'Invalid index');
      min = Number(indexText);
    }
    if (min === 0 || indexOf() > min) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        cluster.changes.off('change', check);
        req.off('close', done);
        resolve();
      };
      const check = () => {
        if (indexOf() > min) done();
      };
      const timer = setTimeout(done, waitMs);
      cluster.changes.on('change', check);
      req.once('close', done);
    });
  }

  function namespaceOf(url: URL): string {
    return url.searchParams.get('namespace') || 'default';
  }

  function checkRegion(url: URL): void {
    const wanted = url.searchParams.get('region');
    if (wanted && wanted !== region) throw new HttpError(500, 'No path to region');
  }

  function checkToken(req: IncomingMessage): void {
    if (!options.aclToken) return;
    let token = req.headers['x-nomad-token'] as string | undefined;
    const auth = req.headers.authorization;
    if (!token && auth) {
      const [scheme, value] = auth.split(' ');
      if (scheme === 'Bearer' && value) token = value;
    }
    // An unknown secret is denied as no token is (nomad/auth/auth.go Authenticate; Nomad 1.11.3 answered so).
    if (token !== options.aclToken) throw new HttpError(403, 'Permission denied');
  }

  function jobIndex(namespace: string, id: string): number {
    const job = cluster.job(namespace, id);
    return job ? job.ModifyIndex : cluster.index;
  }

  function stub(job: Json, withMeta: boolean): Json {
    const summary = summaryOf(job);
    const out: Json = {
      ID: job.ID,
      ParentID: job.ParentID ?? '',
      Name: job.Name,
      Namespace: job.Namespace,
      Datacenters: job.Datacenters,
      NodePool: job.NodePool,
      Multiregion: null,
      Type: job.Type,
      Priority: job.Priority,
      Periodic: isPeriodicParent(job),
      ParameterizedJob: false,
      Stop: job.Stop,
      Status: statusOf(job),
      StatusDescription: '',
      JobSummary: summary,
      CreateIndex: job.CreateIndex,
      ModifyIndex: job.ModifyIndex,
      JobModifyIndex: job.JobModifyIndex,
      SubmitTime: job.SubmitTime,
    };
    if (withMeta) out.Meta = job.Meta ?? null;
    return out;
  }

  function statusOf(job: Json): string {
    const allocs = cluster.allocsOf(job.Namespace, job.ID);
    if (allocs.some((a) => !isTerminal(a))) return 'running';
    if (job.Stop) return 'dead';
    // Nomad: a periodic parent is running while it launches; a batch job whose allocations all ended is dead.
    if (isPeriodicParent(job)) return 'running';
    return job.Type === 'batch' && allocs.length > 0 ? 'dead' : 'pending';
  }

  function summaryOf(job: Json): Json {
    const allocs = cluster.allocsOf(job.Namespace, job.ID);
    const summary: Json = {};
    for (const group of job.TaskGroups) {
      const of = allocs.filter((a) => a.TaskGroup === group.Name);
      const count = (pred: (a: Json) => boolean) => of.filter(pred).length;
      summary[group.Name] = {
        Queued: 0,
        Complete: count((a) => a.ClientStatus === 'complete'),
        Failed: count((a) => a.ClientStatus === 'failed'),
        Running: count((a) => a.ClientStatus === 'running'),
        Starting: count((a) => a.ClientStatus === 'pending'),
        Lost: 0,
        Unknown: 0,
      };
    }
    return {
      JobID: job.ID,
      Namespace: job.Namespace,
      Summary: summary,
      Children: { Pending: 0, Running: 0, Dead: 0 },
      CreateIndex: job.CreateIndex,
      ModifyIndex: job.ModifyIndex,
    };
  }

  function publicJob(job: Json): Json {
    return { ...job, Status: statusOf(job) };
  }

  /** Job.Register (nomad/job_endpoint.go): EnforceIndex, PreserveCounts, unchanged-spec shortcut, eval, deployment. */
  async function register(req: IncomingMessage, url: URL, pathId: string | null): Promise<{ reply: Json; index: number }> {
    const args = await decode(req, JobRegisterRequestType);
    if (!args.Job) throw new HttpError(400, 'Job must be specified');
    if (args.Job.ID === undefined) throw new HttpError(400, "Job ID hasn't been provided");
    if (pathId !== null && args.Job.ID !== pathId) throw new HttpError(400, 'Job ID does not match name');
    if (args.Job.Type === 'system' && (args.Job.TaskGroups ?? []).some((g: Json) => g?.Scaling)) {
      throw new HttpError(400, 'Task groups with job type system do not support scaling blocks');
    }
    if (args.EvalPriority && (args.EvalPriority < 1 || args.EvalPriority > 100)) {
      throw new HttpError(400, 'Eval priority must be between 1 and 100');
    }
    const namespace = url.searchParams.get('namespace') || args.Job.Namespace || args.Namespace || 'default';
    checkRegion(url);
    const job = canonicalizeJob(args.Job, namespace, region);
    if (!namespaces.has(namespace)) throw new HttpError(500, `job "${job.ID}" is in nonexistent namespace "${namespace}"`);
    const errors = validateJob(job);
    if (errors.length > 0) throw new HttpError(500, multierror(errors));
    const existing = cluster.job(namespace, job.ID);
    if (args.EnforceIndex) {
      const index = args.JobModifyIndex ?? 0;
      const prefix = 'Enforcing job modify index';
      if (existing) {
        if (index === 0) throw new HttpError(500, `${prefix} 0: job already exists`);
        if (index !== existing.JobModifyIndex) {
          throw new HttpError(500, `${prefix} ${index}: job exists with conflicting job modify index: ${existing.JobModifyIndex}`);
        }
      } else if (index !== 0) throw new HttpError(500, `${prefix} ${index}: job does not exist`);
    }
    if (existing && existing.Type !== job.Type) throw new HttpError(500, `cannot update job from type "${existing.Type}" to "${job.Type}"`);
    if (existing && args.PreserveCounts) {
      for (const group of job.TaskGroups) {
        const old = existing.TaskGroups.find((g: Json) => g.Name === group.Name);
        if (old) group.Count = old.Count;
      }
    }
    for (const group of job.TaskGroups) {
      if (!group.Scaling) continue;
      const old = existing?.TaskGroups.find((g: Json) => g.Name === group.Name)?.Scaling;
      group.Scaling.ID = old?.ID ?? randomUUID();
      group.Scaling.Namespace = namespace;
    }
    const warnings = '';
    if (existing && sameJson(specOf(existing), specOf({ ...job, ParentID: existing.ParentID, Dispatched: existing.Dispatched }))) {
      const evaluation = cluster.createEval(existing, 'job-register', existing.JobModifyIndex);
      void cluster.reconcile(namespace, job.ID, evaluation.ID);
      return {
        reply: {
          EvalID: evaluation.ID,
          EvalCreateIndex: evaluation.CreateIndex,
          JobModifyIndex: existing.ModifyIndex,
          Warnings: warnings,
          Index: evaluation.CreateIndex,
          LastContact: 0,
          KnownLeader: false,
          NextToken: '',
        },
        index: evaluation.CreateIndex,
      };
    }
    const index = cluster.bump();
    const stored: Json = {
      ...job,
      ParentID: job.ParentID ?? '',
      Dispatched: false,
      Status: 'pending',
      StatusDescription: '',
      Stable: false,
      Version: existing ? existing.Version + 1 : 0,
      SubmitTime: Date.now() * 1_000_000,
      CreateIndex: existing ? existing.CreateIndex : index,
      ModifyIndex: index,
      JobModifyIndex: index,
    };
    for (const group of stored.TaskGroups) {
      if (group.Scaling) {
        group.Scaling.CreateIndex ??= index;
        group.Scaling.ModifyIndex = index;
      }
    }
    if (!cluster.jobs.has(namespace)) cluster.jobs.set(namespace, new Map());
    cluster.jobs.get(namespace)!.set(job.ID, stored);
    const key = cluster.key(namespace, job.ID);
    cluster.versions.set(key, [stored, ...(existing ? (cluster.versions.get(key) ?? []) : [])]);
    const evaluation = cluster.createEval(stored, 'job-register', index);
    if (isPeriodicParent(stored)) periodic.track(stored);
    else {
      cluster.maybeCreateDeployment(stored, evaluation.ID);
      void cluster.reconcile(namespace, job.ID, evaluation.ID);
    }
    return {
      reply: {
        EvalID: evaluation.ID,
        EvalCreateIndex: evaluation.CreateIndex,
        JobModifyIndex: index,
        Warnings: warnings,
        Index: index,
        LastContact: 0,
        KnownLeader: false,
        NextToken: '',
      },
      index,
    };
  }

  /** Job.Scale (nomad/job_endpoint.go + structs.JobScaleRequest.Validate). */
  async function scale(req: IncomingMessage, url: URL, id: string): Promise<{ reply: Json; index: number }> {
    const args = await decode(req, ScalingRequestType);
    const namespace = namespaceOf(url);
    const target: Record<string, string> = args.Target ?? {};
    if (target.Job && target.Job !== id) throw new HttpError(400, 'job ID in payload did not match URL');
    if (target.Namespace && target.Namespace !== namespace) throw new HttpError(400, 'namespace in payload did not match header');
    if (!target.Group) throw new HttpError(400, 'missing task group name for scaling action');
    if (args.Count !== undefined) {
      if (args.Count < 0) throw new HttpError(400, "scaling action count can't be negative");
      if (args.Error) throw new HttpError(400, 'scaling action should not contain count if error is true');
    }
    const existing = cluster.job(namespace, id);
    if (!existing) throw new HttpError(404, `job "${id}" not found`);
    if (existing.Type === 'system' && args.Count > 1) throw new HttpError(400, 'jobs of type "system" can only be scaled between 0 and 1');
    const group = existing.TaskGroups.find((g: Json) => g.Name === target.Group);
    if (!group) throw new HttpError(400, `task group "${target.Group}" specified for scaling does not exist in job`);
    const now = Date.now() * 1_000_000;
    const event: Json = {
      Count: args.Count ?? null,
      PreviousCount: group.Count,
      Error: args.Error ?? false,
      Message: args.Message ?? '',
      Meta: args.Meta ?? null,
      EvalID: null,
      Time: now,
      CreateIndex: 0,
    };
    let reply: Json;
    if (args.Count !== undefined) {
      if (group.Scaling) {
        if (args.Count < group.Scaling.Min)
          throw new HttpError(400, `group count was less than scaling policy minimum: ${args.Count} < ${group.Scaling.Min}`);
        if (group.Scaling.Max < args.Count)
          throw new HttpError(400, `group count was greater than scaling policy maximum: ${args.Count} > ${group.Scaling.Max}`);
      }
      const deployment = cluster.latestDeployment(namespace, id);
      if (
        deployment &&
        ['running', 'paused', 'pending', 'blocked', 'unblocking'].includes(deployment.Status) &&
        deployment.JobCreateIndex === existing.CreateIndex
      ) {
        throw new HttpError(400, 'job scaling blocked due to active deployment');
      }
      if (args.JobModifyIndex > 0 && args.JobModifyIndex !== existing.JobModifyIndex) {
        throw new HttpError(
          500,
          `Enforcing job modify index ${args.JobModifyIndex}: job exists with conflicting job modify index: ${existing.JobModifyIndex}`,
        );
      }
      const index = cluster.bump();
      const job: Json = structuredClone(existing);
      job.TaskGroups.find((g: Json) => g.Name === target.Group).Count = args.Count;
      Object.assign(job, { Version: existing.Version + 1, SubmitTime: now, ModifyIndex: index, JobModifyIndex: index, Stable: false });
      cluster.jobs.get(namespace)!.set(id, job);
      const key = cluster.key(namespace, id);
      cluster.versions.set(key, [job, ...(cluster.versions.get(key) ?? [])]);
      const evaluation = cluster.createEval(job, 'job-scaling', index);
      cluster.maybeCreateDeployment(job, evaluation.ID);
      event.EvalID = evaluation.ID;
      void cluster.reconcile(namespace, id, evaluation.ID);
      reply = {
        EvalID: evaluation.ID,
        EvalCreateIndex: evaluation.CreateIndex,
        JobModifyIndex: index,
        Warnings: '',
        Index: 0,
        LastContact: 0,
        KnownLeader: false,
        NextToken: '',
      };
    } else {
      reply = {
        EvalID: '',
        EvalCreateIndex: 0,
        JobModifyIndex: existing.ModifyIndex,
        Warnings: '',
        Index: 0,
        LastContact: 0,
        KnownLeader: false,
        NextToken: '',
      };
    }
    event.CreateIndex = cluster.bump();
    const key = cluster.key(namespace, id);
    const events = cluster.scalingEvents.get(key) ?? {};
    events[target.Group] = [event, ...(events[target.Group] ?? [])];
    cluster.scalingEvents.set(key, events);
    reply.Index = event.CreateIndex;
    return { reply, index: event.CreateIndex };
  }

  async function deregister(url: URL, id: string): Promise<{ reply: Json; index: number }> {
    const namespace = namespaceOf(url);
    const purgeText = url.searchParams.get('purge');
    let purge = false;
    if (purgeText) {
      const parsed = parseBool(purgeText);
      if (parsed === null)
        throw new HttpError(
          500,
          `Failed to parse value of "purge" (${purgeText}) as a bool: strconv.ParseBool: parsing "${purgeText}": invalid syntax`,
        );
      purge = parsed;
    }
    const existing = cluster.job(namespace, id);
    periodic.untrack(namespace, id);
    if (!existing) {
      return {
        reply: {
          EvalID: '',
          EvalCreateIndex: 0,
          JobModifyIndex: 0,
          VolumeEvalID: '',
          VolumeEvalIndex: 0,
          Index: 0,
          LastContact: 0,
          KnownLeader: false,
          NextToken: '',
        },
        index: 0,
      };
    }
    let jobModifyIndex: number;
    let target = existing;
    if (purge) {
      cluster.jobs.get(namespace)!.delete(id);
      cluster.versions.delete(cluster.key(namespace, id));
      cluster.scalingEvents.delete(cluster.key(namespace, id));
      jobModifyIndex = cluster.bump();
    } else {
      jobModifyIndex = cluster.bump();
      target = {
        ...structuredClone(existing),
        Stop: true,
        Version: existing.Version + 1,
        ModifyIndex: jobModifyIndex,
        JobModifyIndex: jobModifyIndex,
        SubmitTime: Date.now() * 1_000_000,
        Stable: false,
      };
      cluster.jobs.get(namespace)!.set(id, target);
      const key = cluster.key(namespace, id);
      cluster.versions.set(key, [target, ...(cluster.versions.get(key) ?? [])]);
    }
    for (const d of cluster.deployments) {
      if (d.Namespace === namespace && d.JobID === id && d.Status === 'running') {
        d.Status = 'cancelled';
        d.StatusDescription = 'Cancelled because job is stopped';
        d.ModifyIndex = cluster.bump();
      }
    }
    const evaluation = cluster.createEval(target, 'job-deregister', jobModifyIndex);
    void cluster.reconcile(namespace, id, evaluation.ID);
    return {
      reply: {
        EvalID: evaluation.ID,
        EvalCreateIndex: evaluation.CreateIndex,
        JobModifyIndex: jobModifyIndex,
        VolumeEvalID: '',
        VolumeEvalIndex: 0,
        Index: evaluation.CreateIndex,
        LastContact: 0,
        KnownLeader: false,
        NextToken: '',
      },
      index: evaluation.CreateIndex,
    };
  }

  async function plan(req: IncomingMessage, url: URL, id: string): Promise<Json> {
    const args = await decode(req, JobPlanRequestType);
    if (!args.Job) throw new HttpError(400, 'Job must be specified');
    if (args.Job.ID === undefined) throw new HttpError(400, 'Job must have a valid ID');
    if (args.Job.ID !== id) throw new HttpError(400, 'Job ID does not match');
    const namespace = url.searchParams.get('namespace') || args.Job.Namespace || 'default';
    const job = canonicalizeJob(args.Job, namespace, region);
    const errors = validateJob(job);
    if (errors.length > 0) throw new HttpError(500, multierror(errors));
    const existing = cluster.job(namespace, id);
    const live = existing ? cluster.allocsOf(namespace, id).filter((a) => !isTerminal(a)) : [];
    return {
      JobModifyIndex: existing?.JobModifyIndex ?? 0,
      CreatedEvals: null,
      // The stored job's server-set fields are no change of the plan's (Nomad 1.11.3 answered Fields null for an unchanged top level).
      Diff: args.Diff
        ? diffJobs(
            existing ? specOf(existing) : null,
            specOf(existing ? { ...job, ParentID: existing.ParentID, Dispatched: existing.Dispatched } : job),
          )
        : null,
      Annotations: { DesiredTGUpdates: planAnnotations(existing ?? null, job, live), PreemptedAllocs: null },
      // A job that is not periodic has no next launch: null, as Nomad 1.11.3 answered.
      FailedTGAllocs: null,
      NextPeriodicLaunch: null,
      Warnings: '',
      Index: cluster.index,
    };
  }

  async function logs(res: ServerResponse, url: URL, allocId: string): Promise<void> {
    if (!allocId) throw new HttpError(400, 'must provide a valid alloc id');
    const task = url.searchParams.get('task');
    if (!task) throw new HttpError(400, 'must provide task name');
    for (const key of ['follow', 'plain']) {
      const v = url.searchParams.get(key);
      if (v && parseBool(v) === null)
        throw new HttpError(400, `failed to parse ${key} field to boolean: strconv.ParseBool: parsing "${v}": invalid syntax`);
    }
    const plain = parseBool(url.searchParams.get('plain') ?? 'false') ?? false;
    const type = url.searchParams.get('type');
    if (type !== 'stdout' && type !== 'stderr') throw new HttpError(400, 'must provide log type (stdout/stderr)');
    const origin = url.searchParams.get('origin') || 'start';
    if (origin !== 'start' && origin !== 'end') throw new HttpError(400, 'origin must be start or end');
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const alloc = cluster.allocs.get(allocId);
    if (!alloc) throw new HttpError(404, `Unknown allocation "${allocId}"`);
    const runner = cluster.runners.get(allocId);
    if (!runner?.tasks.some((t) => t.task.Name === task)) throw new HttpError(400, `unknown task name "${task}"`);
    // client/fs_endpoint.go logs: a task that never started has no logs yet (Nomad 1.11.3 answered so).
    if (!alloc.TaskStates?.[task]?.StartedAt) throw new HttpError(404, `task "${task}" not started yet. No logs available`);
    const file = path.join(runner.dir, 'alloc', 'logs', `${task}.${type}.0`);
    const size = existsSync(file) ? statSync(file).size : 0;
    const start = origin === 'start' ? Math.min(offset, size) : Math.max(size - offset, 0);
    res.writeHead(200, { 'Content-Type': plain ? 'text/plain' : 'application/json' });
    if (size <= start) {
      res.end();
      return;
    }
    const stream = createReadStream(file, { start, end: size - 1 });
    if (plain) {
      stream.pipe(res);
      await once(stream, 'end');
      return;
    }
    // Not plain: StreamFrames {Data (base64), File, Offset}.
    let position = start;
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      position += buffer.length;
      res.write(JSON.stringify({ Data: buffer.toString('base64'), File: `alloc/logs/${task}.${type}.0`, Offset: position }));
    }
    res.end();
  }

  /** `/v1/var/:path` (variables.ts says what it follows). */
  async function variable(req: IncomingMessage, res: ServerResponse, url: URL, method: string, varPath: string): Promise<void> {
    if (varPath === '') throw new HttpError(400, 'missing variable path');
    const requested = url.searchParams.get('namespace') || 'default';
    if (method === 'GET') {
      const found = cluster.variables.get(requested, varPath);
      if (!found) throw new HttpError(404, 'variable not found');
      return send(res, found, found.ModifyIndex);
    }
    if (method === 'PUT' || method === 'POST') {
      const given = JSON.parse((await body(req)) || '{}') as { Namespace?: string; Items?: Record<string, string> };
      if (!given.Items || Object.keys(given.Items).length === 0) throw new HttpError(400, 'variable missing required Items object');
      const stored = cluster.variables.put(given.Namespace || requested, varPath, given.Items, cluster.bump());
      return sendWrite(res, stored, stored.ModifyIndex);
    }
    if (method === 'DELETE') {
      cluster.variables.delete(requested, varPath);
      res.setHeader('X-Nomad-Index', String(cluster.bump()));
      res.writeHead(204);
      res.end();
      return;
    }
    throw new HttpError(400, 'Invalid method');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin');
    const method = req.method ?? 'GET';
    const p = url.pathname;
    checkToken(req);
    checkRegion(url);
    const isWrite = method === 'PUT' || method === 'POST';
    let m: RegExpExecArray | null;

    if (p === '/v1/jobs') {
      if (isWrite) {
        const { reply, index } = await register(req, url, null);
        return sendWrite(res, reply, index);
      }
      if (method !== 'GET') throw new HttpError(405, 'Invalid method');
      const ns = namespaceOf(url);
      const prefix = url.searchParams.get('prefix') ?? '';
      const withMeta = parseBool(url.searchParams.get('meta') ?? 'false') ?? false;
      const listIndex = () =>
        Math.max(1, ...[...cluster.jobs.values()].flatMap((m) => [...m.values()].map((j) => j.ModifyIndex)), cluster.index);
      await blocking(req, url, listIndex);
      const jobs = [...cluster.jobs.entries()]
        .filter(([name]) => ns === '*' || name === ns)
        .flatMap(([, jobs]) => [...jobs.values()])
        .filter((j) => j.ID.startsWith(prefix))
        .sort((a, b) => (a.ID < b.ID ? -1 : 1));
      return send(
        res,
        jobs.map((j) => stub(j, withMeta)),
        listIndex(),
      );
    }
    if (p === '/v1/validate/job') {
      if (!isWrite) throw new HttpError(405, 'Invalid method');
      const args = await decode(req, JobValidateRequestType);
      if (!args.Job) throw new HttpError(400, 'Job must be specified');
      const job = canonicalizeJob(args.Job, namespaceOf(url), region);
      const errors = validateJob(job);
      return send(res, {
        DriverConfigValidated: false,
        ValidationErrors: errors,
        Error: errors.length ? multierror(errors) : '',
        Warnings: '',
      });
    }
    if ((m = /^\/v1\/job\/([^/]+)\/([a-z-]+)$/.exec(p))) {
      const id = decodeURIComponent(m[1]!);
      const ns = namespaceOf(url);
      const sub = m[2]!;
      if (sub === 'plan') {
        if (!isWrite) throw new HttpError(405, 'Invalid method');
        const reply = await plan(req, url, id);
        return sendWrite(res, reply, reply.Index);
      }
      if (sub === 'scale' && isWrite) {
        const { reply, index } = await scale(req, url, id);
        return sendWrite(res, reply, index);
      }
      if (method !== 'GET') throw new HttpError(405, 'Invalid method');
      const allocIndex = () => Math.max(1, ...cluster.allocsOf(ns, id).map((a) => a.ModifyIndex));
      switch (sub) {
        case 'allocations': {
          await blocking(req, url, allocIndex);
          const all = parseBool(url.searchParams.get('all') ?? 'false') ?? false;
          const job = cluster.job(ns, id);
          const allocs = cluster.allocsOf(ns, id).filter((a) => all || !job || a.Job.CreateIndex === job.CreateIndex);
          return send(res, allocs.sort((a, b) => b.CreateIndex - a.CreateIndex).map(allocStub), allocIndex());
        }
        case 'deployments':
        case 'deployment': {
          const depIndex = () =>
            Math.max(1, ...cluster.deployments.filter((d) => d.Namespace === ns && d.JobID === id).map((d) => d.ModifyIndex));
          await blocking(req, url, depIndex);
          if (sub === 'deployment') return send(res, cluster.latestDeployment(ns, id) ?? null, depIndex());
          return send(
            res,
            cluster.deployments.filter((d) => d.Namespace === ns && d.JobID === id).sort((a, b) => b.CreateIndex - a.CreateIndex),
            depIndex(),
          );
        }
        case 'evaluations': {
          const evals = () => cluster.evals.filter((e) => e.Namespace === ns && e.JobID === id);
          const evalIndex = () => Math.max(1, ...evals().map((e) => e.ModifyIndex));
          await blocking(req, url, evalIndex);
          // []*structs.Evaluation, encoded as GET /v1/evaluation/:id encodes one (command/agent/job_endpoint.go jobEvaluations; Nomad 1.11.3 answered so).
          return send(
            res,
            evals()
              .sort((a, b) => b.CreateIndex - a.CreateIndex)
              .map(evaluation),
            evalIndex(),
          );
        }
        case 'summary': {
          await blocking(req, url, () => Math.max(jobIndex(ns, id), allocIndex()));
          const job = cluster.job(ns, id);
          if (!job) notFound(res, jobIndex(ns, id), 'job not found');
          return send(res, summaryOf(job), Math.max(jobIndex(ns, id), allocIndex()));
        }
        case 'versions': {
          await blocking(req, url, () => jobIndex(ns, id));
          const versions = cluster.versions.get(cluster.key(ns, id));
          if (!versions) notFound(res, jobIndex(ns, id), 'job versions not found');
          return send(res, { Versions: versions.map(publicJob), Diffs: null, Index: jobIndex(ns, id) }, jobIndex(ns, id));
        }
        case 'scale': {
          const scaleIndex = () =>
            Math.max(
              jobIndex(ns, id),
              allocIndex(),
              ...Object.values(cluster.scalingEvents.get(cluster.key(ns, id)) ?? {})
                .flat()
                .map((e: Json) => e.CreateIndex),
            );
          await blocking(req, url, scaleIndex);
          const job = cluster.job(ns, id);
          if (!job) notFound(res, scaleIndex(), 'job not found');
          const allocs = cluster.allocsOf(ns, id).filter((a) => a.DesiredStatus === 'run');
          const events = cluster.scalingEvents.get(cluster.key(ns, id)) ?? {};
          const groups = Object.fromEntries(
            job.TaskGroups.map((g: Json) => {
              const of = allocs.filter((a) => a.TaskGroup === g.Name);
              return [
                g.Name,
                {
                  Desired: g.Count,
                  Placed: of.length,
                  Running: of.filter((a) => a.ClientStatus === 'running').length,
                  Healthy: of.filter((a) => a.DeploymentStatus?.Healthy === true).length,
                  Unhealthy: of.filter((a) => a.DeploymentStatus?.Healthy === false).length,
                  Events: events[g.Name] ?? null,
                },
              ];
            }),
          );
          return send(
            res,
            {
              JobID: id,
              Namespace: ns,
              JobCreateIndex: job.CreateIndex,
              JobModifyIndex: job.JobModifyIndex,
              JobStopped: job.Stop,
              TaskGroups: groups,
            },
            scaleIndex(),
          );
        }
        default:
          throw new HttpError(404, '404 page not found');
      }
    }
    if ((m = /^\/v1\/job\/([^/]+)$/.exec(p))) {
      const id = decodeURIComponent(m[1]!);
      const ns = namespaceOf(url);
      if (isWrite) {
        const { reply, index } = await register(req, url, id);
        return sendWrite(res, reply, index);
      }
      if (method === 'DELETE') {
        const { reply, index } = await deregister(url, id);
        return sendWrite(res, reply, index);
      }
      if (method !== 'GET') throw new HttpError(405, 'Invalid method');
      await blocking(req, url, () => jobIndex(ns, id));
      const job = cluster.job(ns, id);
      if (!job) notFound(res, jobIndex(ns, id), 'job not found');
      return send(res, publicJob(job), job.ModifyIndex);
    }
    if ((m = /^\/v1\/allocation\/([^/]+)$/.exec(p))) {
      if (method !== 'GET') throw new HttpError(405, 'Invalid method');
      const id = m[1]!;
      await blocking(req, url, () => cluster.allocs.get(id)?.ModifyIndex ?? cluster.index);
      const alloc = cluster.allocs.get(id);
      if (!alloc) notFound(res, cluster.index, 'alloc not found');
      return send(res, allocation(alloc), alloc.ModifyIndex);
    }
    if (p === '/v1/allocations') {
      if (method !== 'GET') throw new HttpError(405, 'Invalid method');
      const ns = namespaceOf(url);
      const prefix = url.searchParams.get('prefix') ?? '';
      const index = () => Math.max(1, ...[...cluster.allocs.values()].map((a) => a.ModifyIndex));
      await blocking(req, url, index);
      const list = [...cluster.allocs.values()].filter((a) => (ns === '*' || a.Namespace === ns) && a.ID.startsWith(prefix));
      return send(res, list.map(allocStub), index());
    }
    if ((m = /^\/v1\/evaluation\/([^/]+)$/.exec(p))) {
      const id = m[1]!;
      await blocking(req, url, () => cluster.evals.find((e) => e.ID === id)?.ModifyIndex ?? cluster.index);
      const found = cluster.evals.find((e) => e.ID === id);
      if (!found) notFound(res, cluster.index, 'eval not found');
      return send(res, evaluation(found), found.ModifyIndex);
    }
    if ((m = /^\/v1\/deployment\/([^/]+)$/.exec(p))) {
      const id = m[1]!;
      await blocking(req, url, () => cluster.deployments.find((d) => d.ID === id)?.ModifyIndex ?? cluster.index);
      const deployment = cluster.deployments.find((d) => d.ID === id);
      if (!deployment) throw new HttpError(404, 'deployment not found');
      return send(res, deployment, deployment.ModifyIndex);
    }
    if ((m = /^\/v1\/client\/fs\/logs\/?(.*)$/.exec(p))) {
      if (method !== 'GET') throw new HttpError(405, 'Invalid method');
      return logs(res, url, m[1]!);
    }
    if (p === '/v1/scaling/policies') {
      const ns = namespaceOf(url);
      const list = () =>
        [...(cluster.jobs.get(ns)?.values() ?? [])].flatMap((j) => j.TaskGroups.filter((g: Json) => g.Scaling).map((g: Json) => g.Scaling));
      const index = () => Math.max(1, ...list().map((s) => s.ModifyIndex));
      await blocking(req, url, index);
      return send(
        res,
        list().map((s) => ({
          ID: s.ID,
          Enabled: s.Enabled,
          Type: s.Type,
          Target: s.Target,
          CreateIndex: s.CreateIndex,
          ModifyIndex: s.ModifyIndex,
        })),
        index(),
      );
    }
    if ((m = /^\/v1\/scaling\/policy\/([^/]+)$/.exec(p))) {
      const all = [...cluster.jobs.values()]
        .flatMap((jobs) => [...jobs.values()])
        .flatMap((j) => j.TaskGroups.map((g: Json) => g.Scaling))
        .filter(Boolean);
      const policy = all.find((s) => s.ID === m![1]);
      if (!policy) throw new HttpError(404, 'Scaling policy not found');
      return send(res, policy, policy.ModifyIndex);
    }
    if (p === '/v1/status/leader') return send(res, '127.0.0.1:4647');
    if ((m = /^\/v1\/var\/(.*)$/.exec(p))) return variable(req, res, url, method, m[1]!);
    throw new HttpError(404, '404 page not found');
  }

  server.listen(options.port ?? 0, options.hostIp ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    cluster,
    consulErrors: consul?.errors ?? [],
    async close() {
      periodic.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await cluster.close();
    },
  };
}

/** Go's strconv.ParseBool. */
function parseBool(text: string): boolean | null {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return null;
}

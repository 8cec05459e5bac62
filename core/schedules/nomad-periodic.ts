/**
 * Schedules on Nomad: Nomad runs them, as periodic batch jobs
 * (jobs/periodic.ts). While it leads, svc keeps one periodic job per
 * scheduled function of every deployed, unpaused app registered (again
 * whenever the compiled job changes: a redeploy, a new schedule) and purges
 * this installation's periodic jobs no schedule wants any more (a redeploy
 * without `schedule=`, a pause, a delete). Each tick is a child job
 * `<id>/periodic-<unix seconds>` that Nomad launches itself, so a leader
 * change loses no tick; `ProhibitOverlap` keeps two runs apart.
 */
import { nomadCronSpec } from '../../jobs/periodic.js';
import { unitKey } from '../deployments/keys.js';
import { SvcError } from '../errors.js';
import type { AppSpec } from '../workload/types.js';
import { sleep } from '../state/backoff.js';
import type { Deployment } from '../deployments/types.js';
import type { ImageBuilder } from '../images/types.js';
import type { NomadClient } from '../scheduler/nomad/client.js';
import { INSTALL_META_KEY } from '../scheduler/nomad/job-id.js';
import type { CompileUnit } from '../scheduler/nomad/types.js';
import { scheduledFunctions, type ScheduleLeader } from './scheduler.js';

/** How often the leader compares the periodic jobs with the schedules. */
const RECONCILE_MS = 2000;

export interface NomadPeriodicOptions {
  readonly deployments: { list(): Deployment[] };
  readonly images: Pick<ImageBuilder, 'build'>;
  /** The periodic job compiler bound to the cluster (core/scheduler/nomad/unit-compiler.ts with compilePeriodicJob). */
  readonly compile: CompileUnit;
  readonly client: Pick<NomadClient, 'get' | 'put' | 'delete'>;
  /** This installation (`Meta.svc_install`): only its own periodic jobs are purged. */
  readonly install: string | undefined;
  readonly log: (text: string) => void;
  readonly report: (error: unknown) => void;
}

interface ListedJob {
  readonly ID: string;
  readonly ParentID?: string;
  readonly Meta?: Record<string, string> | null;
}

export class NomadPeriodicSchedules implements ScheduleLeader {
  readonly #options: NomadPeriodicOptions;
  /** The body last registered per job ID: registered again only when it changes. */
  readonly #registered = new Map<string, string>();
  readonly #closed = new AbortController();
  #loop: Promise<void> | null = null;

  constructor(options: NomadPeriodicOptions) {
    this.#options = options;
  }

  lead(signal: AbortSignal): void {
    if (this.#loop !== null || this.#closed.signal.aborted) return;
    const both = AbortSignal.any([signal, this.#closed.signal]);
    this.#loop = (async () => {
      while (!both.aborted) {
        await this.reconcile().catch(this.#options.report);
        await sleep(RECONCILE_MS, both).catch(() => {}); // aborted: the loop ends
      }
    })().finally(() => {
      this.#loop = null;
      this.#registered.clear();
    });
  }

  async close(): Promise<void> {
    this.#closed.abort();
    await this.#loop;
  }

  /** One pass: register what is wanted (when it changed), purge what is not. */
  async reconcile(): Promise<void> {
    const { client, compile, images, install } = this.#options;
    const wanted = new Set<string>();
    for (const scheduled of scheduledFunctions(this.#options.deployments.list())) {
      const ref = { workspace: scheduled.workspace, app: scheduled.app, stage: 'deployed' as const };
      const workload = scheduled.spec.workloads.find((w) => w.name === scheduled.fn)!;
      const image = await images.build(workload.image, () => {});
      const body = await compile({ key: unitKey(ref, scheduled.fn), ref, workload, image, source: { root: '', entry: scheduled.spec.entry, bundleSha256: scheduled.bundleSha256 } });
      const meta: Record<string, string> = { ...(body.Job.Meta ?? {}), ...(install === undefined ? {} : { [INSTALL_META_KEY]: install }) };
      const job = { ...body.Job, Meta: meta };
      const id = String(job.ID);
      wanted.add(id);
      const text = JSON.stringify(job);
      if (this.#registered.get(id) === text) continue;
      await client.put('/v1/jobs', { Job: job });
      this.#registered.set(id, text);
      this.#options.log(`registered the periodic Nomad job ${id}: ${meta.svc_schedule ?? ''}`);
    }
    if (install === undefined) return;
    const listed = (await client.get<ListedJob[] | null>('/v1/jobs', { prefix: 'svc-', meta: true })).body ?? [];
    for (const job of listed) {
      const ours = job.Meta?.svc_schedule !== undefined && job.Meta?.[INSTALL_META_KEY] === install && !job.ParentID;
      if (!ours || wanted.has(job.ID)) continue;
      await client.delete(`/v1/job/${encodeURIComponent(job.ID)}`, { purge: true });
      this.#registered.delete(job.ID);
      this.#options.log(`purged the periodic Nomad job ${job.ID}: its schedule is gone (redeployed without it, paused or deleted)`);
    }
  }
}

/** Refuses, before a deploy changes anything, a schedule Nomad cannot run: a period no cron spec writes. */
export function checkNomadSchedules(spec: AppSpec): void {
  spec.workloads.forEach((workload, index) => {
    if (!workload.schedule) return;
    try {
      nomadCronSpec(workload.schedule);
    } catch (error) {
      if (!(error instanceof SvcError)) throw error;
      const message = `${workload.name}: ${error.message}`;
      throw new SvcError('manifest_invalid', message, { ...(error.hint === undefined ? {} : { hint: error.hint }), details: { issues: [{ path: `workloads[${index}].options.schedule.every`, message: error.message }] } });
    }
  });
}

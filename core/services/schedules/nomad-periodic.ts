/**
 * Schedules on Nomad: Nomad runs them, as periodic batch jobs
 * (jobs/periodic.ts). While it leads, svc keeps one periodic job per
 * scheduled function of every deployed, unpaused app registered (again
 * whenever the compiled job changes: a redeploy, a new schedule) and purges
 * this installation's periodic jobs no schedule wants any more (a redeploy
 * without `schedule=`, a pause, a delete). Each tick is a child job
 * `<id>/periodic-<unix seconds>` that Nomad launches itself, so a leader
 * change loses no tick; `ProhibitOverlap` keeps two runs apart.
 *
 * A function that names secrets gets them as other units on Nomad do: svc
 * writes their values into the Nomad Variable `nomad/jobs/<periodic job id>`
 * before it registers the job (again whenever a value changes, so the next
 * tick has it), and deletes it with the job. Each child job reads that path:
 * Nomad gives a child's workload identity its parent's job ID.
 */
import { createHash } from 'node:crypto';
import { INSTALL_META_KEY } from '../../../jobs/names.js';
import { nomadCronSpec } from '../../../jobs/periodic.js';
import { unitKey } from '../../model/deployment-keys.js';
import { SvcError } from '../../model/errors.js';
import type { AppSpec } from '../../model/workload/types.js';
import { sleep } from '../../infra/state/backoff.js';
import type { Deployment } from '../deployments/types.js';
import type { ImageBuilder } from '../../infra/images/types.js';
import type { NomadClient } from '../../infra/scheduler/nomad/client.js';
import { deleteSecretVariable, writeSecretVariable } from '../../infra/scheduler/nomad/secret-variables.js';
import type { SecretEnvironment } from '../secrets/types.js';
import type { CompileUnit } from '../../infra/scheduler/nomad/types.js';
import { scheduledFunctions, type Scheduled, type ScheduleLeader } from './scheduler.js';

/** How often the leader compares the periodic jobs with the schedules. */
const RECONCILE_MS = 2000;

export interface NomadPeriodicOptions {
  readonly deployments: { list(): Deployment[] };
  readonly images: Pick<ImageBuilder, 'build'>;
  /** The periodic job compiler bound to the cluster (core/infra/scheduler/nomad/unit-compiler.ts with compilePeriodicJob). */
  readonly compile: CompileUnit;
  readonly client: Pick<NomadClient, 'get' | 'put' | 'delete'>;
  /** The values of the secrets scheduled functions name (none: svc keeps no secrets). */
  readonly secrets?: Pick<SecretEnvironment, 'environment'>;
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
  /** The last failure reported per scheduled function: one that lasts (a deleted secret) is reported once, not every pass. */
  readonly #failing = new Map<string, string>();
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
      this.#failing.clear();
    });
  }

  async close(): Promise<void> {
    this.#closed.abort();
    await this.#loop;
  }

  /** One pass: register what is wanted (when it changed), purge what is not. */
  async reconcile(): Promise<void> {
    const { client, install } = this.#options;
    const wanted = new Set<string>();
    let complete = true;
    for (const scheduled of scheduledFunctions(this.#options.deployments.list())) {
      // One function that cannot be registered (a secret deleted since its deploy) does not hold back the others...
      const key = `${scheduled.workspace}/${scheduled.app}/${scheduled.fn}`;
      try {
        await this.#register(scheduled, wanted);
        this.#failing.delete(key);
      } catch (error) {
        complete = false;
        if (this.#failing.get(key) !== String(error)) this.#options.report(error);
        this.#failing.set(key, String(error));
      }
    }
    // ...but nothing is purged on a pass that may not know every job it wants.
    if (install === undefined || !complete) return;
    const listed = (await client.get<ListedJob[] | null>('/v1/jobs', { prefix: 'svc-', meta: true })).body ?? [];
    for (const job of listed) {
      const ours = job.Meta?.svc_schedule !== undefined && job.Meta?.[INSTALL_META_KEY] === install && !job.ParentID;
      if (!ours || wanted.has(job.ID)) continue;
      await client.delete(`/v1/job/${encodeURIComponent(job.ID)}`, { purge: true });
      await deleteSecretVariable(client, job.ID);
      this.#registered.delete(job.ID);
      this.#options.log(`purged the periodic Nomad job ${job.ID}: its schedule is gone (redeployed without it, paused or deleted)`);
    }
  }

  /** Registers one scheduled function's periodic job, its secrets' Variable first, when either changed. */
  async #register(scheduled: Scheduled, wanted: Set<string>): Promise<void> {
    const { client, compile, images, install, secrets } = this.#options;
    const ref = { workspace: scheduled.workspace, app: scheduled.app, stage: 'deployed' as const };
    const workload = scheduled.spec.workloads.find((w) => w.name === scheduled.fn)!;
    const image = await images.build(workload.image, () => {});
    const body = await compile({
      key: unitKey(ref, scheduled.fn),
      ref,
      workload,
      image,
      source: { root: '', entry: scheduled.spec.entry, bundleSha256: scheduled.bundleSha256 },
    });
    const meta: Record<string, string> = { ...(body.Job.Meta ?? {}), ...(install === undefined ? {} : { [INSTALL_META_KEY]: install }) };
    const job = { ...body.Job, Meta: meta };
    const id = String(job.ID);
    wanted.add(id);
    // The deployed app's scope: its inline (`@<i>`) values are the deploy's.
    const names = workload.secrets ?? [];
    const env = names.length === 0 || secrets === undefined ? undefined : await secrets.environment(ref, names);
    const text = registeredText(job, env);
    if (this.#registered.get(id) === text) return;
    // Before the job: its first tick's template waits for the Variable. A job without secrets keeps none from before.
    if (env === undefined) await deleteSecretVariable(client, id);
    else await writeSecretVariable(client, id, env);
    await client.put('/v1/jobs', { Job: job });
    this.#registered.set(id, text);
    this.#options.log(`registered the periodic Nomad job ${id}: ${meta.svc_schedule ?? ''}`);
  }
}

/** The job, and the values of its secrets (a digest of them: no value stays in memory), as last registered. */
function registeredText(job: unknown, env: Readonly<Record<string, string>> | undefined): string {
  const values = env === undefined ? '' : createHash('sha256').update(JSON.stringify(env)).digest('hex');
  return `${JSON.stringify(job)}\n${values}`;
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
      throw new SvcError('manifest_invalid', message, {
        ...(error.hint === undefined ? {} : { hint: error.hint }),
        details: { issues: [{ path: `workloads[${index}].options.schedule.every`, message: error.message }] },
      });
    }
  });
}

/** svc's Nomad jobs and allocations as the cluster suites look them up (with the management token). */
import assert from 'node:assert/strict';
import { NAMESPACE, type Cluster } from './agents.js';

export interface JobStub {
  readonly ID: string;
  readonly Status: string;
  readonly Meta: Record<string, string>;
}

/** The jobs in svc's namespace, with their Meta (svc_app, svc_workload). */
export async function svcJobs(c: Cluster): Promise<JobStub[]> {
  return (await c.nomadGet(`/v1/jobs?namespace=${NAMESPACE}&meta=true`)) as JobStub[];
}

/** The job of a deployed workload; fails the test without one. */
export async function jobOf(c: Cluster, app: string, workload: string): Promise<JobStub> {
  const found = (await svcJobs(c)).find((j) => j.Meta?.svc_app === app && j.Meta?.svc_workload === workload);
  assert.ok(found, `a job for ${app}/${workload}`);
  return found;
}

/** The allocations of a job that run and should. */
export async function runningAllocations(c: Cluster, jobId: string): Promise<{ ID: string }[]> {
  const allocations = (await c.nomadGet(`/v1/job/${encodeURIComponent(jobId)}/allocations?namespace=${NAMESPACE}`)) as {
    ID: string;
    ClientStatus: string;
    DesiredStatus: string;
  }[];
  return allocations.filter((a) => a.ClientStatus === 'running' && a.DesiredStatus === 'run');
}

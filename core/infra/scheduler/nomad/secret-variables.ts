/**
 * A unit's secret values on Nomad: the Nomad Variable `nomad/jobs/<job id>`
 * that the job's template renders into the task's environment
 * (jobs/secrets-template.ts). Written before the job is registered, so that
 * its first allocation finds it; deleted with the job. Values go to Nomad's
 * Variables API (encrypted at rest by Nomad's keyring) and nowhere else.
 */
import { secretsVariablePath } from '../../../../jobs/secrets-template.js';
import { SvcError } from '../../../model/errors.js';
import type { NomadClient } from './client.js';

const variablePath = (jobId: string) => `/v1/var/${secretsVariablePath(jobId)}`;
/** Nomad refuses a Variable without items; a workload whose secrets hold no key still gets its (empty) template rendered. */
const PLACEHOLDER = { SVC_SECRETS: '' };

export async function writeSecretVariable(
  client: Pick<NomadClient, 'put'>,
  jobId: string,
  env: Readonly<Record<string, string>>,
): Promise<void> {
  const items = Object.keys(env).length === 0 ? PLACEHOLDER : env;
  // The answer echoes the items: it is read by nobody.
  await client.put(variablePath(jobId), { Path: secretsVariablePath(jobId), Items: items });
}

export async function deleteSecretVariable(client: Pick<NomadClient, 'delete'>, jobId: string): Promise<void> {
  try {
    await client.delete(variablePath(jobId));
  } catch (error) {
    if (!(error instanceof SvcError && error.code === 'not_found')) throw error;
  }
}

/**
 * How a workload's secrets reach its Nomad task without a value in the job:
 * svc writes them into the Nomad Variable `nomad/jobs/<job id>` (which the
 * job's workload identity reads without any ACL policy), and this template,
 * rendered by the Nomad client with `Envvars`, puts each of its items into
 * the task's environment. Values are written as JSON strings, which Nomad's
 * env-file parser reads back exactly (newlines, quotes, `#` and all).
 */
import type { Workload } from '../core/model/workload/types.js';
import type { Task, Template } from './types.js';

/** Where svc writes a job's secret values; the only Variable path the job's tasks may read by default. */
export function secretsVariablePath(jobId: string): string {
  return `nomad/jobs/${jobId}`;
}

/** The rendered env file, in the task's private `secrets/` folder. */
export const SECRETS_ENV_FILE = 'secrets/svc-secrets.env';

export function secretsTemplate(jobId: string): Template {
  return {
    EmbeddedTmpl: `{{ with nomadVar "${secretsVariablePath(jobId)}" }}{{ range .Tuples }}{{ .K }}={{ .V | toJSON }}\n{{ end }}{{ end }}`,
    DestPath: SECRETS_ENV_FILE,
    Envvars: true,
    Perms: '0400',
    // A changed secret reaches the task at its next deploy (a new job) or `svc secret set --restart`, as on one machine.
    ChangeMode: 'noop',
  };
}

/** The task's `Templates` when the workload names secrets (none otherwise): the job holds no value. */
export function secretsTemplates(workload: Workload, jobId: string): Pick<Task, 'Templates'> {
  return (workload.secrets ?? []).length > 0 ? { Templates: [secretsTemplate(jobId)] } : {};
}

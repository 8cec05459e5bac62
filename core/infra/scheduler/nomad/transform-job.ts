/**
 * Runs the `transformJob` plugin hook over a compiled job: each plugin gets
 * the previous plugin's job, and each result must still pass `validateJob`
 * and keep its `ID` (svc finds its jobs by ID); otherwise a `plugin_error`
 * names the plugin and lists every broken path.
 */
import type { JobIssue, NomadJob, NomadJobRegistration } from '../../../../jobs/types.js';
import { formatIssues, validateJob } from '../../../../jobs/validate.js';
import { SvcError } from '../../../model/errors.js';
import type { PluginHost } from '../../plugin/host.js';
import type { JobTransformContext } from '../../plugin/types.js';

export async function transformJob(
  plugins: PluginHost,
  registration: NomadJobRegistration,
  context: JobTransformContext,
): Promise<NomadJobRegistration> {
  if (!plugins.has('transformJob')) return registration;
  const id = registration.Job.ID;
  const check = (job: NomadJob) => {
    const issues: JobIssue[] = validateJob({ ...registration, Job: job });
    if (typeof job === 'object' && job !== null && job.ID !== id)
      issues.unshift({ path: 'Job.ID', message: `changed from "${id}" to ${JSON.stringify(job.ID)}; svc finds its jobs by ID` });
    if (issues.length === 0) return;
    throw new SvcError(
      'plugin_error',
      `the job it returned for ${context.app}/${context.workload} breaks ${issues.length} rule${issues.length === 1 ? '' : 's'}:\n${formatIssues(issues)}`,
      {
        details: { issues },
        hint: 'Return a copy of the job with only valid Nomad JSON API fields (Go field names, durations in nanoseconds); see docs/operators.md.',
      },
    );
  };
  // A copy: a plugin that mutates its argument cannot change the compiled job behind svc's back.
  const job = await plugins.sequentialChecked('transformJob', check, structuredClone(registration.Job), context);
  return { ...registration, Job: job };
}

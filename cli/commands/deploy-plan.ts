/**
 * `svc deploy --dry-run`: asks the server what the deploy would do
 * (`POST /api/v1/apps/:app/deployments/plan`) and prints it: each workload
 * with its change and URL, and on Nomad the job the scheduler would create
 * or change, its placements and the ones it could not make. Nothing is
 * deployed; the bundle is uploaded (the plan reads it, as a deploy would).
 */
import type { DeployPlan } from '../../core/services/deployments/plan.js';
import type { Output } from '../output.js';
import { formatTable } from '../table.js';

export function printPlan(out: Output, plan: DeployPlan, json: boolean): void {
  if (json) {
    out.result(JSON.stringify(plan, null, 2));
    return;
  }
  const { dim } = out.color;
  const rows = plan.workloads.map((w) => [
    w.name,
    w.change === 'new' ? 'new' : 'new version',
    w.url ?? dim(`(${w.kind}: no URL)`),
    w.job === null ? dim('-') : `${w.job.id} (${w.job.change})`,
  ]);
  for (const line of formatTable(['workload', 'change', 'url', plan.scheduler === 'nomad' ? 'nomad job' : 'job'], rows)) out.result(line);
  for (const name of plan.removed) out.result(`${name}  ${dim('would be deleted (--prune)')}`);
  for (const w of plan.workloads) {
    if (w.job === null) continue;
    const placements = Object.entries(w.job.placements)
      .map(([action, count]) => `${action} ${count}`)
      .join(', ');
    if (placements) out.step(`${w.name}: Nomad would ${placements}`);
    for (const warning of w.job.warnings) out.warn(`${w.name}: ${warning}`);
    for (const failure of w.job.failures) out.warn(`${w.name}: ${failure}`);
  }
  out.done(
    `dry run: nothing was deployed${plan.scheduler === 'local' ? ' (the server runs workloads on its own machine: there is no scheduler plan)' : ''}`,
  );
}

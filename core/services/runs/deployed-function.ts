/**
 * The code of a deployed function, for a run of it (`POST /api/v1/runs` with `app` in place of a
 * manifest and a bundle: `svc.Function.from_name` in Python; a spawned call of it). The run uses
 * the deployed version's spec and bundle and reads the deploy's secrets, inline values included,
 * as a scheduled run does.
 */
import { SvcError } from '../../model/errors.js';
import type { AppSpec } from '../../model/workload/types.js';
import type { Deployment } from '../deployments/types.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import { functionOf, workloadNamed } from './runs.js';
import type { InlineScope } from '../secrets/types.js';

/** Where the deployed versions are looked up. */
export interface DeployedApps {
  get(ref: DeploymentRef): Deployment | null;
}

export interface DeployedFunctionCode {
  readonly spec: AppSpec;
  readonly bundle: string;
  readonly secretScope: InlineScope;
}

export function deployedFunctionCode(
  app: string,
  fn: string,
  workspace: string,
  deployments: DeployedApps,
  shell = false,
): DeployedFunctionCode {
  const deployment = deployments.get({ workspace, app, stage: 'deployed' });
  if (deployment === null) {
    throw new SvcError('not_found', `the workspace has no deployed app ${app}.`, {
      hint: 'svc app list shows the deployed apps; deploy it with svc deploy first.',
    });
  }
  if (deployment.paused) {
    throw new SvcError('app_paused', `the app ${app} is paused: its functions do not run until it is resumed.`, {
      hint: `Resume it with svc app resume ${app}, or deploy it again.`,
    });
  }
  // An unknown name, or (but for a shell) another kind of workload: refused as a run refuses it.
  if (shell) workloadNamed(deployment.spec, fn);
  else functionOf(deployment.spec, fn);
  const bundle = deployment.workloads.find((w) => w.name === fn)?.bundleSha256 ?? null;
  if (bundle === null) {
    // A deployment that runs a project folder (svc serve's own) has no bundle to start a run from.
    throw new SvcError('bad_request', `the deployed function ${fn} of ${app} runs from a folder, not a bundle; it cannot be run alone.`, {
      hint: 'Deploy the app with svc deploy, which uploads its bundle.',
    });
  }
  return { spec: deployment.spec, bundle, secretScope: { workspace, app, stage: 'deployed' } };
}

/**
 * The job compiler bound to a running svc: turns a deployment unit into the
 * body the Nomad driver registers. The job context comes from the unit (its
 * key's serial, its bundle, its image) and the cluster config; the
 * plugins' `transformJob` hook runs over it; the result must pass the strict
 * validator, so a bad job never reaches Nomad.
 */
import { compileJob } from '../../../../jobs/compile.js';
import type { ClusterSettings, JobContext } from '../../../../jobs/context.js';
import { parseUnitKey } from '../../../model/deployment-keys.js';
import { nomadJobId } from '../../../model/nomad-job-id.js';
import { transformJob } from './transform-job.js';
import type { NomadJobRegistration } from '../../../../jobs/types.js';
import { formatIssues, validateJob } from '../../../../jobs/validate.js';
import { SvcError } from '../../../model/errors.js';
import type { PluginHost } from '../../plugin/host.js';
import type { DeploymentUnit } from '../types.js';
import type { Workload } from '../../../model/workload/types.js';
import type { CompileUnit, NomadJobSpec } from './types.js';

export interface UnitCompilerOptions {
  /** Every setting but `python`, which may come from the unit's image. */
  readonly cluster: Omit<ClusterSettings, 'python'>;
  /** Interpreter of raw_exec/exec tasks; null: the unit's image environment (`BuiltImage.pythonPath`). */
  readonly python: string | null;
  readonly plugins: PluginHost;
  /** A signed, expiring URL the Nomad client downloads the bundle from. */
  readonly bundleUrl: (sha256: string) => string;
}

/** `compile`: the service job of a unit (default), or the periodic batch job of a scheduled function (jobs/periodic.ts). */
export function createUnitCompiler(
  options: UnitCompilerOptions,
  compile: (workload: Workload, context: JobContext) => NomadJobRegistration = compileJob,
): CompileUnit {
  return async (unit: DeploymentUnit) => {
    const { ref, workload, source, image } = unit;
    const sha256 = source.bundleSha256;
    if (sha256 === undefined) {
      throw new SvcError('bad_request', `${ref.app}/${workload.name} has no stored code bundle, which Nomad clients download.`, {
        hint: 'Deploy through the API (svc deploy uploads the bundle); svc serve runs projects on this machine only.',
      });
    }
    if ((workload.volumes ?? []).length > 0 && options.cluster.driver === 'raw_exec') {
      // raw_exec has no file system of its own to mount into: Nomad refuses host volumes for it.
      throw new SvcError('bad_request', `${ref.app}/${workload.name} mounts volumes, which Nomad's raw_exec driver cannot.`, {
        hint: 'Run workloads that mount volumes with nomadDriver "exec" or "docker" (docs/volumes.md#on-nomad).',
      });
    }
    const context: JobContext = {
      workspace: ref.workspace,
      app: ref.app,
      stage: ref.stage,
      serial: parseUnitKey(unit.key)?.serial,
      // The driver's ID (submit.ts): a run's key holds its run id, which workspace, app and stage do not.
      jobId: nomadJobId(unit.key),
      version: null,
      entry: source.entry,
      bundle: { url: options.bundleUrl(sha256), sha256 },
      // The docker driver's image, pinned by digest (the OCI builder's); raw_exec/exec run `python` instead.
      image: image.image ?? null,
      cluster: { ...options.cluster, python: options.python ?? image.pythonPath },
    };
    const body = await transformJob(options.plugins, compile(workload, context), {
      workspace: ref.workspace,
      app: ref.app,
      stage: ref.stage,
      workload: workload.name,
    });
    const issues = validateJob(body);
    if (issues.length > 0) {
      throw new SvcError(
        'internal',
        `the Nomad job compiled for ${unit.key} breaks ${issues.length} job rule${issues.length === 1 ? '' : 's'}:\n${formatIssues(issues)}`,
        { details: { issues } },
      );
    }
    return body as NomadJobRegistration & { Job: NomadJobSpec };
  };
}

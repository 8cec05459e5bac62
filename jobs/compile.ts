/**
 * `compileJob(workload, context)`: a **pure** function from a resolved
 * workload to the body of `PUT /v1/jobs`, in Nomad's JSON API shape (Go
 * field names, durations in ns). One service job per deployed workload, one
 * group whose `Count` svc's autoscaler sets through `/v1/job/:id/scale`
 * (`Update.MaxParallel = 0`, so scaling is never blocked by a deployment;
 * `PreserveCounts` so a redeploy keeps the current count), a dynamic port
 * and a Consul service per worker. docs/operators.md describes the result.
 */
import type { Workload } from '../core/model/workload/types.js';
import type { ClusterSettings, JobContext } from './context.js';
import { MINUTE, SECOND } from './durations.js';
import { jobMeta, jobUi } from './meta.js';
import { jobId, workerPortLabels } from './names.js';
import { ephemeralDisk } from './resources.js';
import { workerServices } from './services.js';
import { runtimeTask } from './task.js';
import { groupVolumes } from './volumes.js';
import type { Constraint, NomadJobRegistration } from './types.js';

export function compileJob(workload: Workload, context: JobContext): NomadJobRegistration {
  const id =
    context.jobId ??
    jobId({
      workspace: context.workspace,
      app: context.app,
      stage: context.stage,
      workload: workload.name,
      serial: context.serial,
    });
  const labels = workerPortLabels(workload.scaling.workers);
  const meta = jobMeta(workload, context);
  const { minContainers, maxContainers } = workload.scaling.autoscaler;
  const services = workerServices(workload, context, id, labels, meta);
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Region: context.cluster.region,
      Namespace: context.cluster.namespace,
      Datacenters: [...context.cluster.datacenters],
      // An image runs only on its own architecture: Nomad places docker jobs on clients of that one.
      ...(context.cluster.driver === 'docker' ? { Constraints: [architectureConstraint(context.cluster.platform)] } : {}),
      Priority: 50,
      Meta: meta,
      UI: jobUi(workload, context),
      TaskGroups: [
        {
          Name: workload.name,
          // New jobs start at the minimum; redeploys keep the current count (PreserveCounts).
          Count: minContainers,
          Scaling: { Min: minContainers, Max: maxContainers, Enabled: true, Type: 'horizontal' },
          Update: { MaxParallel: 0 },
          Networks: [{ Mode: 'host', DynamicPorts: labels.map((label) => ({ Label: label, Value: 0 })) }],
          RestartPolicy: { Attempts: 3, Interval: 5 * MINUTE, Delay: 5 * SECOND, Mode: 'fail' },
          ReschedulePolicy: { Delay: 10 * SECOND, DelayFunction: 'exponential', MaxDelay: 5 * MINUTE, Unlimited: true },
          EphemeralDisk: { ...ephemeralDisk },
          // Consul deregisters the workers this long before they get SIGTERM, so that routers stop sending.
          ShutdownDelay: 5 * SECOND,
          Meta: { svc_workload: workload.name },
          ...groupVolumes(workload, context),
          Tasks: [runtimeTask(workload, context, labels, services, id)],
        },
      ],
    },
    PreserveCounts: true,
  };
}

/** Nomad fingerprints `cpu.arch` as Go names it (`amd64`, `arm64`), as in OCI platforms. */
function architectureConstraint(platform: ClusterSettings['platform']): Constraint {
  return { LTarget: '${attr.cpu.arch}', RTarget: platform.split('/')[1]!, Operand: '=' };
}

/**
 * svc:autoscale-queue-depth — the built-in scaling policy `queue-depth`.
 * Built on the public plugin API only, like any third-party policy plugin.
 */
import { PLUGIN_API_VERSION, type Plugin, type ScalingInput } from 'svc/plugin';

/** The name the config setting `scalingPolicy` uses (its default). */
export const QUEUE_DEPTH = 'queue-depth';

/**
 * One container per `tasks_per_container` requests in flight or waiting,
 * within [`min_containers`, `max_containers`] (docs/scaling.md):
 * clamp(ceil((inFlight + queued) / tasksPerContainer), min, max).
 */
export function queueDepth({ workload, inFlight, queued }: ScalingInput): number {
  const { minContainers, maxContainers, tasksPerContainer } = workload.autoscaler;
  const wanted = Math.ceil((inFlight + queued) / tasksPerContainer);
  return Math.min(maxContainers, Math.max(minContainers, wanted));
}

export default function autoscaleQueueDepthPlugin(): Plugin {
  return {
    name: 'svc:autoscale-queue-depth',
    apiVersion: PLUGIN_API_VERSION,
    scalingPolicies: { [QUEUE_DEPTH]: queueDepth },
  };
}

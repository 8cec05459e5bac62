/**
 * A workload's volumes on Nomad: one group `volume` block per mount, of type `host`, whose source is the
 * dynamic host volume svc registered for the svc volume (`svc-<workspace>--<volume>`,
 * core/infra/scheduler/nomad/host-volumes.ts), and one task `volume_mount` at the mount's path. Nomad
 * places the allocations only on nodes that have every such host volume.
 */
import type { Workload } from '../core/model/workload/types.js';
import type { JobContext } from './context.js';
import { hostVolumeName } from './names.js';
import type { Task, TaskGroup, VolumeRequest } from './types.js';

/** Every container of the workload, and other workloads' too, may write at once: the folder is shared. */
export const HOST_VOLUME_ACCESS_MODE = 'single-node-multi-writer';
export const HOST_VOLUME_ATTACHMENT_MODE = 'file-system';

/** The group's name for mount `index`: `volume-<index>` (one svc volume may be mounted at two paths). */
const alias = (index: number) => `volume-${index}`;

export function groupVolumes(workload: Workload, context: Pick<JobContext, 'workspace'>): Pick<TaskGroup, 'Volumes'> {
  const mounts = workload.volumes ?? [];
  if (mounts.length === 0) return {};
  const volumes: Record<string, VolumeRequest> = {};
  mounts.forEach((mount, index) => {
    volumes[alias(index)] = {
      Name: alias(index),
      Type: 'host',
      Source: hostVolumeName(context.workspace, mount.volume),
      ReadOnly: mount.readOnly,
      AccessMode: HOST_VOLUME_ACCESS_MODE,
      AttachmentMode: HOST_VOLUME_ATTACHMENT_MODE,
    };
  });
  return { Volumes: volumes };
}

export function volumeMounts(workload: Workload): Pick<Task, 'VolumeMounts'> {
  const mounts = workload.volumes ?? [];
  if (mounts.length === 0) return {};
  return { VolumeMounts: mounts.map((mount, index) => ({ Volume: alias(index), Destination: mount.path, ReadOnly: mount.readOnly })) };
}

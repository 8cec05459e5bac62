/**
 * A workload's volumes on Nomad: one group `volume` block per mount and one task `volume_mount` at the
 * mount's path. The block's source is named after the svc volume (`svc-<workspace>--<volume>`): the
 * dynamic host volume svc registered for it (core/infra/scheduler/nomad/host-volumes.ts; Nomad places
 * the allocations only on nodes that have every such host volume), or, when the operator names a CSI
 * plugin, the CSI volume svc created with it (core/infra/scheduler/nomad/csi-volumes.ts), which Nomad
 * has the plugin attach wherever the allocation lands.
 */
import type { Workload } from '../core/model/workload/types.js';
import type { ClusterSettings, JobContext } from './context.js';
import { nomadVolumeName } from './names.js';
import type { Task, TaskGroup, VolumeRequest } from './types.js';

/** Every container of the workload, and other workloads' too, may write at once: the folder is shared. */
export const HOST_VOLUME_ACCESS_MODE = 'single-node-multi-writer';
export const HOST_VOLUME_ATTACHMENT_MODE = 'file-system';
/** Nomad's CSI modes have no single-node-multi-writer: containers on several nodes may write at once. */
export const CSI_VOLUME_ACCESS_MODE = 'multi-node-multi-writer';
export const CSI_VOLUME_ATTACHMENT_MODE = 'file-system';

/** The group `volume` block that mounts svc volume `volume` of `workspace` as `cluster.volumes` says. */
export function volumeRequest(
  name: string,
  workspace: string,
  volume: string,
  readOnly: boolean,
  cluster: Pick<ClusterSettings, 'volumes'>,
): VolumeRequest {
  const csi = cluster.volumes === 'csi';
  return {
    Name: name,
    Type: csi ? 'csi' : 'host',
    Source: nomadVolumeName(workspace, volume),
    // A CSI volume is claimed for writing even where it is mounted read-only: Nomad stages a read-only
    // claim at a path of its own, and plugins that stage a volume once per node refuse the second one.
    // The task's volume_mount is what makes it read-only in the container (volumeMounts below).
    ReadOnly: csi ? false : readOnly,
    AccessMode: csi ? CSI_VOLUME_ACCESS_MODE : HOST_VOLUME_ACCESS_MODE,
    AttachmentMode: csi ? CSI_VOLUME_ATTACHMENT_MODE : HOST_VOLUME_ATTACHMENT_MODE,
  };
}

/** The group's name for mount `index`: `volume-<index>` (one svc volume may be mounted at two paths). */
const alias = (index: number) => `volume-${index}`;

export function groupVolumes(workload: Workload, context: Pick<JobContext, 'workspace' | 'cluster'>): Pick<TaskGroup, 'Volumes'> {
  const mounts = workload.volumes ?? [];
  if (mounts.length === 0) return {};
  const volumes: Record<string, VolumeRequest> = {};
  mounts.forEach((mount, index) => {
    volumes[alias(index)] = volumeRequest(alias(index), context.workspace, mount.volume, mount.readOnly, context.cluster);
  });
  return { Volumes: volumes };
}

export function volumeMounts(workload: Workload): Pick<Task, 'VolumeMounts'> {
  const mounts = workload.volumes ?? [];
  if (mounts.length === 0) return {};
  return { VolumeMounts: mounts.map((mount, index) => ({ Volume: alias(index), Destination: mount.path, ReadOnly: mount.readOnly })) };
}

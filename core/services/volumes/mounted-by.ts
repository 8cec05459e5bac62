/**
 * Who mounts a volume: the deployed workloads and the remote runs that name it in `volumes=`. Asked
 * before a volume is deleted (refused while any does, unless forced) and shown with each volume.
 */

/** What keeps workloads that may mount volumes: the deployment manager, the remote runs. */
export interface VolumeUserSource {
  /** How each of its workloads of `workspace` that mounts `volume` is named in messages. */
  volumeUsers(workspace: string, volume: string): string[];
}

export function mountedBy(sources: readonly VolumeUserSource[], workspace: string, volume: string): string[] {
  return sources.flatMap((source) => source.volumeUsers(workspace, volume));
}

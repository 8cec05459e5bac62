/**
 * svc volumes as Nomad CSI volumes, when the operator names a CSI plugin (`nomadCsiPlugin`): each svc
 * volume is the CSI volume `svc-<workspace>--<volume>` (jobs/names.ts), created through Nomad with the
 * plugin (`PUT /v1/volume/csi/:id/create`) and deleted the same way once nothing claims it. Every
 * container that mounts it, on any node, and the volume's keeper may write at once
 * (`multi-node-multi-writer`); the plugin's storage decides what one sees of another's writes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { nomadVolumeName } from '../../../../jobs/names.js';
import { CSI_VOLUME_ACCESS_MODE, CSI_VOLUME_ATTACHMENT_MODE } from '../../../../jobs/volumes.js';
import { SvcError } from '../../../model/errors.js';
import type { NomadClient } from './client.js';

type Client = Pick<NomadClient, 'get' | 'put' | 'delete' | 'namespace'>;

export interface CsiVolumeOptions {
  /** The plugin's ID in Nomad (`csi_plugin { id = … }`). */
  readonly plugin: string;
  /** The plugin's own creation parameters (`nomadCsiParameters`), as name and value, passed as they are. */
  readonly parameters?: readonly (readonly [string, string])[];
  /** The capacity asked of the plugin: the most one svc volume may hold (`volumeMaxBytes`). */
  readonly capacityBytes: number;
}

/** How long a volume's last claims (an allocation just stopped) may take to be released before it can be deleted. */
const RELEASE_TIMEOUT_MS = 60_000;

const volumePath = (id: string) => `/v1/volume/csi/${encodeURIComponent(id)}`;

/** Creates the CSI volume of `volume` with the plugin, unless Nomad has it already: whether this call made it. */
export async function ensureCsiVolume(client: Client, options: CsiVolumeOptions, workspace: string, volume: string): Promise<boolean> {
  const id = nomadVolumeName(workspace, volume);
  if (await exists(client, id)) return false;
  try {
    await client.put(`${volumePath(id)}/create`, {
      Volumes: [
        {
          ID: id,
          Name: id,
          Namespace: client.namespace ?? 'default',
          PluginID: options.plugin,
          RequestedCapacityMin: options.capacityBytes,
          RequestedCapabilities: [{ AccessMode: CSI_VOLUME_ACCESS_MODE, AttachmentMode: CSI_VOLUME_ATTACHMENT_MODE }],
          Parameters: Object.fromEntries(options.parameters ?? []),
        },
      ],
    });
    return true;
  } catch (error) {
    // Another svc replica created it meanwhile: what matters is that it is there.
    if (await exists(client, id)) return false;
    throw new SvcError(
      'nomad_rejected',
      `Nomad could not create the CSI volume ${id} with the plugin ${options.plugin}: ${textOf(error)}`,
      {
        hint: `Check that the plugin ${options.plugin} is healthy (nomad plugin status ${options.plugin}) and accepts ${CSI_VOLUME_ACCESS_MODE} file-system volumes (docs/volumes.md#csi-volumes).`,
        cause: error,
      },
    );
  }
}

/** Deletes the CSI volume of `volume` (and its data, in the plugin), waiting for its last claims to be released. */
export async function deleteCsiVolume(client: Client, workspace: string, volume: string): Promise<void> {
  const id = nomadVolumeName(workspace, volume);
  const deadline = Date.now() + RELEASE_TIMEOUT_MS;
  for (;;) {
    if (!(await exists(client, id))) return;
    try {
      await client.delete(`${volumePath(id)}/delete`);
      return;
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found') return;
      // "volume in use": Nomad's volume watcher releases a stopped allocation's claim a moment later.
      // Anything else (a refusal, the plugin failing) is said as it is.
      if (!/volume in use/.test(textOf(error))) throw error;
      if (Date.now() > deadline) {
        throw new SvcError('conflict', `Nomad still has claims on the CSI volume ${id}: ${textOf(error)}`, {
          hint: `Run svc volume delete again in a minute; nomad volume status ${id} shows who claims it.`,
          cause: error,
        });
      }
      await sleep(1000);
    }
  }
}

async function exists(client: Client, id: string): Promise<boolean> {
  try {
    await client.get(volumePath(id));
    return true;
  } catch (error) {
    if (error instanceof SvcError && error.code === 'not_found') return false;
    throw error;
  }
}

function textOf(error: unknown): string {
  const details = error instanceof SvcError ? (error.details as { text?: string } | undefined) : undefined;
  return (details?.text ?? (error as Error).message).trim();
}

/**
 * svc volumes on Nomad: before a job that mounts some is registered, each is registered as a Nomad
 * dynamic host volume (`svc-<workspace>--<volume>`, jobs/volumes.ts) on every node named in
 * `nomadVolumeNodes` (by default the node named like this machine): the nodes that see svc's data dir,
 * where the volume's files are, at the same path (svc's own node, or nodes that share the folder).
 * Nomad then places the job's allocations only on those nodes, and binds the folder into each task.
 * A volume already registered on a node is left as it is; one registered just now is waited for until
 * its node reports it ready, since Nomad refuses to place a job on a node before that.
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { nomadVolumeName } from '../../../../jobs/names.js';
import { HOST_VOLUME_ACCESS_MODE, HOST_VOLUME_ATTACHMENT_MODE } from '../../../../jobs/volumes.js';
import { SvcError } from '../../../model/errors.js';
import type { UnitMount } from '../types.js';
import type { NomadClient } from './client.js';

interface NodeStub {
  readonly ID: string;
  readonly Name: string;
  readonly Status: string;
}

interface HostVolumeStub {
  readonly ID: string;
  readonly Name: string;
  readonly NodeID: string;
  readonly State: string;
}

type Client = Pick<NomadClient, 'get' | 'put' | 'namespace'>;

/** How long a newly registered volume may take to be ready on its node. */
const READY_TIMEOUT_MS = 30_000;

/** The names of the nodes volumes are registered on: the operator's, or this machine's hostname. */
export function volumeNodeNames(configured: readonly string[]): readonly string[] {
  return configured.length > 0 ? configured : [os.hostname()];
}

/**
 * Registers each mounted volume of `workspace` on each of `nodeNames` that lacks it, and resolves once
 * all are ready. `pending` holds the registrations under way in this driver: two units of one deploy
 * mounting the same volume wait for one registration instead of racing Nomad with two.
 */
export async function ensureHostVolumes(
  client: Client,
  pending: Map<string, Promise<void>>,
  workspace: string,
  mounts: readonly UnitMount[],
  nodeNames: readonly string[],
): Promise<void> {
  if (mounts.length === 0) return;
  const nodes = (await client.get<NodeStub[]>('/v1/nodes')).body.filter((node) => nodeNames.includes(node.Name) && node.Status === 'ready');
  if (nodes.length === 0) {
    throw new SvcError(
      'bad_request',
      `no ready Nomad node is named ${nodeNames.join(' or ')}, where svc's volumes would be mounted from.`,
      {
        hint: "Set nomadVolumeNodes to the Nomad nodes that see svc's data dir at the same path (docs/volumes.md#on-nomad).",
        details: { nodes: [...nodeNames] },
      },
    );
  }
  const sources = new Map(mounts.map((mount) => [nomadVolumeName(workspace, mount.volume), mount.source]));
  await Promise.all(
    [...sources].flatMap(([name, hostPath]) =>
      nodes.map((node) => {
        const key = `${name}@${node.ID}`;
        let registration = pending.get(key);
        if (registration === undefined) {
          registration = register(client, name, hostPath, node.ID).finally(() => pending.delete(key));
          pending.set(key, registration);
        }
        return registration;
      }),
    ),
  );
}

async function register(client: Client, name: string, hostPath: string, nodeId: string): Promise<void> {
  const found = async () =>
    (await client.get<HostVolumeStub[]>('/v1/volumes', { type: 'host' })).body.find((v) => v.Name === name && v.NodeID === nodeId);
  let volume = await found();
  if (volume === undefined) {
    try {
      await client.put('/v1/volume/host/register', {
        Volume: {
          Name: name,
          Namespace: client.namespace ?? 'default',
          NodeID: nodeId,
          HostPath: hostPath,
          RequestedCapabilities: [{ AttachmentMode: HOST_VOLUME_ATTACHMENT_MODE, AccessMode: HOST_VOLUME_ACCESS_MODE }],
        },
      });
    } catch (error) {
      // Another svc replica registered it meanwhile: what matters is that it is there.
      if (!(error instanceof SvcError && /already exists/.test(String((error.details as { text?: string }).text)))) throw error;
    }
  }
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (volume = await found(); volume?.State !== 'ready'; volume = await found()) {
    if (Date.now() > deadline) {
      throw new SvcError(
        'container_failed',
        `the Nomad host volume ${name} is not ready on node ${nodeId} after ${READY_TIMEOUT_MS / 1000} s.`,
        {
          hint: `Check the node's client log; the folder ${hostPath} must exist on that node.`,
        },
      );
    }
    await sleep(250);
  }
}

/**
 * The job of a CSI volume's keeper: one small allocation that mounts the volume and serves its files to
 * svc over HTTP (`python -m svc.runtime volume-keeper`), since a CSI volume's files are reachable only
 * inside an allocation that mounts it. Its token comes from the job's Nomad Variable (`nomad/jobs/<id>`,
 * item `token`, written by svc) through a template into the task's private `secrets/` folder; its port is
 * a dynamic one, which svc reads from the allocation.
 */
import type { ClusterSettings } from './context.js';
import { MINUTE, SECOND } from './durations.js';
import { INSTALL_META_KEY, keeperJobId } from './names.js';
import { logConfig } from './resources.js';
import { secretsVariablePath } from './secrets-template.js';
import { driverConfig } from './task.js';
import type { NomadJobRegistration } from './types.js';
import { volumeRequest } from './volumes.js';

export const KEEPER_PORT_LABEL = 'keeper';
export const KEEPER_TASK = 'keeper';
/** The Nomad Variable item holding the token svc signs its requests to the keeper with (never sent itself). */
export const KEEPER_TOKEN_ITEM = 'token';
/** Meta holding a hash of the job as svc compiled it: a job of an older svc is registered anew. */
export const KEEPER_SPEC_META_KEY = 'svc_keeper_spec';
/** Meta naming the svc volume a keeper job serves (`<workspace>/<volume>`). */
export const KEEPER_META_KEY = 'svc_volume';
/**
 * What the keeper's routes take and answer (2: listings in pages, uploads answer what they replaced), in
 * the task's environment: a keeper job of an older svc then differs from the one compiled now, and is
 * replaced (its task restarted).
 */
export const KEEPER_PROTOCOL = '2';
/** Where the task sees the volume. */
const MOUNT_PATH = '/svc-volume';
/** The rendered token, in the task's private `secrets/` folder (`NOMAD_SECRETS_DIR`). */
const TOKEN_FILE = 'secrets/keeper-token';

export interface KeeperJobContext {
  readonly workspace: string;
  readonly volume: string;
  /** `raw_exec` cannot mount volumes: the keeper runs on `exec` or `docker`. */
  readonly cluster: ClusterSettings & { readonly driver: 'exec' | 'docker' };
  /** The image (docker) with svc's runtime: the image builder's build of an image without packages. */
  readonly image: string | null;
  /** The installation that owns the job (`Meta.svc_install`, INSTALL_META_KEY), when there is one. */
  readonly install?: string | undefined;
}

export function compileKeeperJob(context: KeeperJobContext): NomadJobRegistration {
  const { cluster } = context;
  const id = keeperJobId(context.workspace, context.volume);
  const host = cluster.driver === 'docker' ? '0.0.0.0' : `\${NOMAD_IP_${KEEPER_PORT_LABEL}}`;
  const args = [
    '-m',
    'svc.runtime',
    'volume-keeper',
    '--root',
    MOUNT_PATH,
    '--host',
    host,
    '--port',
    `\${NOMAD_PORT_${KEEPER_PORT_LABEL}}`,
    '--token-file',
    '${NOMAD_SECRETS_DIR}/keeper-token',
  ];
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Region: cluster.region,
      Namespace: cluster.namespace,
      Datacenters: [...cluster.datacenters],
      Priority: 50,
      Meta: {
        [KEEPER_META_KEY]: `${context.workspace}/${context.volume}`,
        ...(context.install === undefined ? {} : { [INSTALL_META_KEY]: context.install }),
      },
      UI: { Description: `Serves the files of the svc volume ${context.volume} (workspace ${context.workspace}) to svc.` },
      TaskGroups: [
        {
          Name: KEEPER_TASK,
          Count: 1,
          Networks: [{ Mode: 'host', DynamicPorts: [{ Label: KEEPER_PORT_LABEL, Value: 0 }] }],
          RestartPolicy: { Attempts: 3, Interval: 5 * MINUTE, Delay: 5 * SECOND, Mode: 'fail' },
          ReschedulePolicy: { Delay: 10 * SECOND, DelayFunction: 'exponential', MaxDelay: 5 * MINUTE, Unlimited: true },
          EphemeralDisk: { SizeMB: 100 },
          Volumes: { data: volumeRequest('data', context.workspace, context.volume, false, cluster) },
          Tasks: [
            {
              Name: KEEPER_TASK,
              Driver: cluster.driver,
              Config: driverConfig({ cluster, image: context.image }, args, [KEEPER_PORT_LABEL]),
              Env: {
                PYTHONDONTWRITEBYTECODE: '1',
                SVC_KEEPER_PROTOCOL: KEEPER_PROTOCOL,
                ...(cluster.runtimePath === null ? {} : { PYTHONPATH: cluster.runtimePath }),
              },
              Resources: { CPU: 200, MemoryMB: 128 },
              LogConfig: { ...logConfig },
              KillTimeout: 10 * SECOND,
              KillSignal: 'SIGTERM',
              VolumeMounts: [{ Volume: 'data', Destination: MOUNT_PATH, ReadOnly: false }],
              Templates: [
                {
                  EmbeddedTmpl: `{{ with nomadVar "${secretsVariablePath(id)}" }}{{ .${KEEPER_TOKEN_ITEM} }}{{ end }}`,
                  DestPath: TOKEN_FILE,
                  Perms: '0400',
                  ChangeMode: 'restart',
                },
              ],
            },
          ],
        },
      ],
    },
  };
}

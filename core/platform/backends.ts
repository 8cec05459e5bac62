/**
 * Which backend does what, from the config: the scheduler driver (local
 * processes or Nomad jobs) and the service registry (in-process or Consul).
 * The two go together (config/cluster-schema.ts refuses a mix): Nomad
 * registers its allocations' services in Consul, local containers register
 * their Unix sockets in the embedded registry.
 */
import type { PlatformMetrics } from '../infra/metrics/platform-metrics.js';
import { createHash } from 'node:crypto';
import os from 'node:os';
import type { ServerConfig } from '../../config/schema.js';
import { createEmbeddedRegistry } from '../infra/registry/embedded.js';
import { ConsulRegistry } from '../infra/registry/consul.js';
import type { ServiceRegistry } from '../infra/registry/types.js';
import { createLocalDriver, type LocalDriver } from '../infra/scheduler/local/driver.js';
import { NomadClient } from '../infra/scheduler/nomad/client.js';
import { createNomadDriver } from '../infra/scheduler/nomad/driver.js';
import type { CsiVolumeOptions } from '../infra/scheduler/nomad/csi-volumes.js';
import type { CompileUnit, NomadDriver } from '../infra/scheduler/nomad/types.js';
import type { DeploymentUnit, LogSink } from '../infra/scheduler/types.js';
import type { GpuDevice } from '../model/gpus/nvidia-smi-csv.js';

export function createRegistry(config: ServerConfig, report: (error: unknown) => void, metrics?: PlatformMetrics): ServiceRegistry {
  if (config.registry === 'embedded') return createEmbeddedRegistry();
  return new ConsulRegistry({
    address: config.consulAddr,
    observe: metrics?.observer('consul'),
    ...(config.consulToken === null ? {} : { token: config.consulToken }),
    // A failed watch is retried with back-off; the first failure of a run of them is worth a line.
    onError: (error, attempt) => {
      if (attempt === 1)
        report(new Error(`the Consul registry cannot read services from ${config.consulAddr} (retrying): ${error.message}`));
    },
  });
}

export interface DriverDependencies {
  readonly registry: ServiceRegistry;
  readonly logs: LogSink;
  readonly zygotes: boolean;
  /** See ServerConfig#cgroupRoot. */
  readonly cgroupRoot: string | null;
  /** The machine's GPUs, for the local driver (core/infra/gpus/inventory.ts). */
  readonly gpus: readonly GpuDevice[];
  readonly onContainerExit: (unit: Pick<DeploymentUnit, 'key'>, containerId: string, reason: string) => void;
  /** The unit → Nomad job compiler (only for `scheduler: nomad`). */
  readonly compile: CompileUnit;
  /** The installation the jobs belong to (see installOf); undefined: this svc purges no job. */
  readonly install: string | undefined;
  /** Times the calls to Nomad (`/metrics`). */
  readonly metrics?: PlatformMetrics;
}

/**
 * Which svc installation owns the Nomad jobs this svc submits: the state they
 * are recorded in, so that replicas of one installation agree on it and two
 * installations sharing a namespace never purge each other's jobs. Consul KV:
 * its prefix; files: this machine and data dir (sha256, Consul-safe).
 */
export function installOf(config: ServerConfig): string {
  const where = config.state === 'consul' ? `consul:${config.consulPrefix}` : `file:${os.hostname()}:${config.dataDir}`;
  return createHash('sha256').update(where).digest('hex').slice(0, 16);
}

/** A client of the config's Nomad API, its calls timed for `/metrics`. */
export function nomadClientOf(config: ServerConfig, metrics: PlatformMetrics): NomadClient {
  return new NomadClient({
    url: config.nomadAddr,
    token: config.nomadToken ?? undefined,
    namespace: config.nomadNamespace,
    region: config.nomadRegion,
    observe: metrics.observer('nomad'),
  });
}

/** The CSI volumes' settings when the operator names a plugin; undefined: host volumes. */
export function csiVolumeOptions(config: ServerConfig): CsiVolumeOptions | undefined {
  return config.nomadCsiPlugin === null
    ? undefined
    : { plugin: config.nomadCsiPlugin, parameters: config.nomadCsiParameters, capacityBytes: config.volumeMaxBytes };
}

export function createDriver(config: ServerConfig, deps: DriverDependencies): LocalDriver | NomadDriver {
  if (config.scheduler === 'local') {
    return createLocalDriver({
      registry: deps.registry,
      logs: deps.logs,
      zygotes: deps.zygotes,
      cgroupRoot: deps.cgroupRoot,
      gpus: deps.gpus,
      onContainerExit: deps.onContainerExit,
    });
  }
  return createNomadDriver({
    url: config.nomadAddr,
    ...(config.nomadToken === null ? {} : { token: config.nomadToken }),
    namespace: config.nomadNamespace,
    region: config.nomadRegion,
    compile: deps.compile,
    logs: deps.logs,
    onContainerExit: deps.onContainerExit,
    install: deps.install,
    taskDriver: config.nomadDriver,
    volumeNodes: config.nomadVolumeNodes,
    csi: csiVolumeOptions(config),
    observe: deps.metrics?.observer('nomad'),
  });
}

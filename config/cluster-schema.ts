/**
 * The settings that put svc on a HashiCorp cluster: which scheduler driver,
 * registry and state store it uses, and how it reaches Nomad and Consul.
 * Defaults are the embedded ones (local processes, in-process registry,
 * files), so a config without these keys runs on one machine as before.
 * docs/configuration.md and docs/operators.md describe them.
 */
import { DEFAULT_BASE_IMAGE } from '../core/infra/images/oci/defaults.js';
import { DEFAULT_MHZ_PER_CORE } from '../jobs/context.js';

export type SchedulerKind = 'local' | 'nomad';
export type RegistryKind = 'embedded' | 'consul';
export type StateBackend = 'file' | 'consul';
export type NomadTaskDriver = 'raw_exec' | 'exec' | 'docker';

export interface ClusterConfig {
  /** `local`: containers are processes on this machine; `nomad`: each workload is a Nomad job. */
  readonly scheduler: SchedulerKind;
  /** Where the gateway learns the healthy containers; follows `scheduler` unless set (`nomad` → `consul`). */
  readonly registry: RegistryKind;
  /** Where apps, deployments, workspaces and tokens live. */
  readonly state: StateBackend;
  readonly nomadAddr: string;
  /** Secret ID of svc's Nomad ACL token; from the environment only. */
  readonly nomadToken: string | null;
  readonly nomadNamespace: string;
  readonly nomadRegion: string;
  readonly nomadDatacenters: readonly string[];
  /**
   * The Nomad nodes svc registers its volumes on as host volumes: those that see svc's data dir (where
   * the volumes' files are) at the same path. Empty: the node named like this machine.
   */
  readonly nomadVolumeNodes: readonly string[];
  /**
   * A CSI plugin's ID in Nomad: svc's volumes are then CSI volumes of that plugin, created through Nomad
   * and mounted wherever Nomad places a container, their files served to svc by a keeper allocation
   * each. Null: host volumes over svc's own folders (`nomadVolumeNodes`).
   */
  readonly nomadCsiPlugin: string | null;
  /** The plugin's own creation parameters for each volume (`parameters` of `nomad volume create`: a disk type, a pool), as name and value. */
  readonly nomadCsiParameters: readonly (readonly [string, string])[];
  /** Task driver of the workload jobs. */
  readonly nomadDriver: NomadTaskDriver;
  /**
   * Interpreter raw_exec/exec tasks run; null: the image builder's environment
   * for the workload (the same path must exist on the Nomad clients).
   */
  readonly nomadPython: string | null;
  readonly mhzPerCore: number;
  readonly cpuMode: 'mhz' | 'cores';
  readonly proxyTags: 'public' | 'all' | 'none';
  readonly consulAddr: string;
  /** Secret ID of svc's Consul ACL token; from the environment only. */
  readonly consulToken: string | null;
  /** KV prefix of svc's state and leader lock; ends in `/`. */
  readonly consulPrefix: string;
  /**
   * The URL other svc replicas reach this one at (followers forward the API
   * to the leader's); null: the address it listens on. Not `publicUrl`, which
   * names the load balancer in front of all replicas.
   */
  readonly advertiseUrl: string | null;
  /**
   * Where the docker driver's images are pushed and pulled from:
   * `[http(s)://]host[:port][/prefix]`; null: none (docker cannot be used).
   */
  readonly imageRegistry: string | null;
  /** The base image of every workload image; `{python}` stands for the image's Python version. */
  readonly imageBase: string;
  /** The platform of the Nomad clients that run docker workloads. */
  readonly imagePlatform: 'linux/amd64' | 'linux/arm64';
  /** Account svc pushes images with (null: anonymous). */
  readonly imageRegistryUsername: string | null;
  /** Its password or access token; from the environment only. */
  readonly imageRegistryPassword: string | null;
}

export function clusterDefaults(): ClusterConfig {
  return {
    scheduler: 'local',
    registry: 'embedded',
    state: 'file',
    nomadAddr: 'http://127.0.0.1:4646',
    nomadToken: null,
    nomadNamespace: 'default',
    nomadRegion: 'global',
    nomadDatacenters: Object.freeze(['dc1']),
    nomadVolumeNodes: Object.freeze([]),
    nomadCsiPlugin: null,
    nomadCsiParameters: Object.freeze([]),
    nomadDriver: 'exec',
    nomadPython: null,
    mhzPerCore: DEFAULT_MHZ_PER_CORE,
    cpuMode: 'mhz',
    proxyTags: 'public',
    consulAddr: 'http://127.0.0.1:8500',
    consulToken: null,
    consulPrefix: 'svc/',
    advertiseUrl: null,
    imageRegistry: null,
    imageBase: DEFAULT_BASE_IMAGE,
    imagePlatform: 'linux/amd64',
    imageRegistryUsername: null,
    imageRegistryPassword: null,
  };
}

/** How each cluster key is read: its variable (then Nomad's/Consul's own), and its kind. */
export const clusterKeys = {
  scheduler: { env: 'SVC_SCHEDULER', kind: 'enum', values: ['local', 'nomad'] },
  registry: { env: 'SVC_REGISTRY', kind: 'enum', values: ['embedded', 'consul'] },
  state: { env: 'SVC_STATE', kind: 'enum', values: ['file', 'consul'] },
  nomadAddr: { env: 'SVC_NOMAD_ADDR', fallbackEnv: 'NOMAD_ADDR', kind: 'agentUrl' },
  nomadToken: { env: 'SVC_NOMAD_TOKEN', fallbackEnv: 'NOMAD_TOKEN', kind: 'secret' },
  nomadNamespace: { env: 'SVC_NOMAD_NAMESPACE', kind: 'string' },
  nomadRegion: { env: 'SVC_NOMAD_REGION', kind: 'string' },
  nomadDatacenters: { env: 'SVC_NOMAD_DATACENTERS', kind: 'list' },
  nomadVolumeNodes: { env: 'SVC_NOMAD_VOLUME_NODES', kind: 'list' },
  nomadCsiPlugin: { env: 'SVC_NOMAD_CSI_PLUGIN', kind: 'string' },
  nomadCsiParameters: { env: 'SVC_NOMAD_CSI_PARAMETERS', kind: 'stringMap' },
  nomadDriver: { env: 'SVC_NOMAD_DRIVER', kind: 'enum', values: ['raw_exec', 'exec', 'docker'] },
  nomadPython: { env: 'SVC_NOMAD_PYTHON', kind: 'string' },
  mhzPerCore: { env: 'SVC_MHZ_PER_CORE', kind: 'mhz' },
  cpuMode: { env: 'SVC_CPU_MODE', kind: 'enum', values: ['mhz', 'cores'] },
  proxyTags: { env: 'SVC_PROXY_TAGS', kind: 'enum', values: ['public', 'all', 'none'] },
  consulAddr: { env: 'SVC_CONSUL_ADDR', fallbackEnv: 'CONSUL_HTTP_ADDR', kind: 'agentUrl' },
  consulToken: { env: 'SVC_CONSUL_TOKEN', fallbackEnv: 'CONSUL_HTTP_TOKEN', kind: 'secret' },
  consulPrefix: { env: 'SVC_CONSUL_PREFIX', kind: 'kvPrefix' },
  advertiseUrl: { env: 'SVC_ADVERTISE_URL', kind: 'origin' },
  imageRegistry: { env: 'SVC_IMAGE_REGISTRY', kind: 'imageRegistry' },
  imageBase: { env: 'SVC_IMAGE_BASE', kind: 'baseImage' },
  imagePlatform: { env: 'SVC_IMAGE_PLATFORM', kind: 'enum', values: ['linux/amd64', 'linux/arm64'] },
  imageRegistryUsername: { env: 'SVC_IMAGE_REGISTRY_USERNAME', kind: 'string' },
  imageRegistryPassword: { env: 'SVC_IMAGE_REGISTRY_PASSWORD', kind: 'password' },
} as const;

/**
 * Rules between keys, after every key was read. `explicit` holds the keys
 * someone set. Returns the problems (empty when the combination works).
 */
export function resolveCluster(config: ClusterConfig, explicit: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const mutable = config as { -readonly [K in keyof ClusterConfig]: ClusterConfig[K] };
  if (!explicit.has('registry')) mutable.registry = config.scheduler === 'nomad' ? 'consul' : 'embedded';
  if (config.scheduler === 'nomad' && config.registry !== 'consul') {
    problems.push(
      'scheduler "nomad" needs registry "consul": Nomad registers the containers\' services in Consul, where the gateway finds them',
    );
  }
  if (config.scheduler === 'local' && config.registry === 'consul') {
    problems.push('registry "consul" needs scheduler "nomad": local containers listen on Unix sockets, which Consul cannot hold');
  }
  if (config.scheduler === 'nomad' && config.nomadDriver === 'docker' && config.imageRegistry === null) {
    problems.push(
      'nomadDriver "docker" needs imageRegistry (SVC_IMAGE_REGISTRY): the registry svc pushes each workload\'s image to and Nomad\'s clients pull it from, such as registry.example.com:5000/svc',
    );
  }
  if (config.scheduler === 'nomad' && config.nomadCsiPlugin !== null && config.nomadDriver === 'raw_exec') {
    problems.push(
      'nomadCsiPlugin needs nomadDriver "exec" or "docker": raw_exec tasks have no file system of their own to mount a volume into (nor has the keeper that serves its files)',
    );
  }
  if ((config.imageRegistryUsername === null) !== (config.imageRegistryPassword === null)) {
    problems.push(
      'imageRegistryUsername and imageRegistryPassword (SVC_IMAGE_REGISTRY_PASSWORD) go together: set both, or neither for a registry that takes anonymous pushes',
    );
  }
  return problems;
}

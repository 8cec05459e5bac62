/**
 * `svcServerJob(options)`: a **pure** function returning the body of
 * `PUT /v1/jobs` (`{"Job": {...}}`) for the Nomad job that runs `svc server`
 * itself: one group of gateway replicas behind a Consul service `svc` with an
 * HTTP check on `/_svc/health`. Unlike workload jobs (no deployments, Count
 * set by svc's autoscaler), this one is a normal rolling deploy: one
 * allocation at a time, gated on the health check, reverted on failure.
 * `jobs/svc-server.nomad.json` is its output with the defaults (a test keeps
 * them in sync); docs/operators.md explains it.
 */
import { svcVersion } from '../core/model/paths.js';
import { MINUTE, SECOND } from './durations.js';
import { HEALTH_PATH, READY_PATH } from '../core/model/platform-paths.js';
import type { NomadJob, Port, Service, Task, Template } from './types.js';

/** svc's own version, from package.json (the docker image tag and `Meta.svc_version`). */
export const SVC_VERSION: string = svcVersion;

/** Node attribute Nomad interpolates to the client's IP: the local Nomad and Consul agents listen there. */
const NODE_IP = '${attr.unique.network.ip-address}';

export interface SvcServerJobOptions {
  /** Gateway replicas (the group's `Count`); default 2. */
  readonly replicas?: number;
  /** A static host port for every replica (at most one replica per client), or 0/undefined for a dynamic one. */
  readonly port?: number;
  /** `raw_exec` (default: node and svc installed on the clients) or `docker` (an image with svc in /opt/svc). */
  readonly driver?: 'raw_exec' | 'docker';
  /** svc's version: the docker image tag and `Meta.svc_version`; default this package's. */
  readonly version?: string;
  /** Docker image; default `svc:<version>`. */
  readonly image?: string;
  /** Node binary for raw_exec; default `/usr/bin/node`. */
  readonly node?: string;
  /** svc's CLI entry point on the client (raw_exec) or in the image (docker); default `/opt/svc/dist/cli/index.js`. */
  readonly cli?: string;
  readonly jobId?: string;
  /** Consul service name of the gateway; default `svc`. */
  readonly serviceName?: string;
  readonly datacenters?: readonly string[];
  readonly region?: string;
  /** Nomad namespace of this job (the workloads' namespace is a separate, planned setting). */
  readonly namespace?: string;
  /** `NOMAD_ADDR` for svc; default the client's own agent, `http://${attr.unique.network.ip-address}:4646`. */
  readonly nomadAddr?: string;
  /** `CONSUL_HTTP_ADDR` for svc; default the client's own agent on port 8500. */
  readonly consulAddr?: string;
  /**
   * Where the ACL tokens come from: `nomad-variables` (default) renders `NOMAD_TOKEN` and
   * `CONSUL_HTTP_TOKEN` from the Nomad Variable `nomad/jobs/<job id>` (keys `nomad_token`,
   * `consul_token`) into the task's environment, and the secrets key (`secrets_key`) into the
   * file SVC_SECRETS_KEY_FILE names; `none` sends none of them.
   */
  readonly secrets?: 'nomad-variables' | 'none';
  /** svc's `publicUrl` (SVC_PUBLIC_URL): the URL clients use; also links on the job page. */
  readonly publicUrl?: string | null;
  /** svc's `baseDomain` (SVC_BASE_DOMAIN): host-based workload URLs. */
  readonly baseDomain?: string | null;
  /** Fabio/Traefik tags routing to the gateway; default true. */
  readonly proxyTags?: boolean;
  /** MHz and MiB per replica; default 1000 and 1024. */
  /**
   * svc's data dir (the bundles the Nomad clients download) on storage every
   * replica shares, such as a host volume on NFS; default: the allocation's
   * own data dir, which holds for one replica only.
   */
  readonly dataDir?: string;
  /** Task driver of the workload jobs svc submits (`SVC_NOMAD_DRIVER`, default `exec`, which enforces `cpu` and `memory`); `docker` needs `imageRegistry`. */
  readonly workloadDriver?: 'raw_exec' | 'exec' | 'docker';
  /** With the docker driver: `SVC_IMAGE_REGISTRY`, where svc pushes the workloads' images. */
  readonly imageRegistry?: string;
  /** With the docker driver: `SVC_IMAGE_BASE` (default `python:{python}-slim`). */
  readonly imageBase?: string;
  /** With the docker driver: `SVC_IMAGE_PLATFORM`, the workload clients' platform (default `linux/amd64`). */
  readonly imagePlatform?: 'linux/amd64' | 'linux/arm64';
  /**
   * With the docker driver: the account svc pushes with (`SVC_IMAGE_REGISTRY_USERNAME`); its
   * password comes from the same Nomad Variable as the tokens (key `image_registry_password`).
   */
  readonly imageRegistryUsername?: string;
  readonly cpu?: number;
  readonly memoryMB?: number;
}

const GROUP = 'gateway';
const TASK = 'server';
const PORT_LABEL = 'http';
const DEFAULT_CLI = '/opt/svc/dist/cli/index.js';
/** In the task's secrets dir: the image registry password, rendered from the Variable. */
const REGISTRY_PASSWORD_FILE = 'image-registry-password';
const SECRETS_KEY_FILE = 'secrets-key';

export function svcServerJob(options: SvcServerJobOptions = {}): { Job: NomadJob } {
  const replicas = options.replicas ?? 2;
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`svcServerJob: replicas must be a whole number ≥ 0, not ${replicas}`);
  const id = options.jobId ?? 'svc';
  const serviceName = options.serviceName ?? 'svc';
  const version = options.version ?? SVC_VERSION;
  const port: Port = options.port ? { Label: PORT_LABEL, Value: options.port } : { Label: PORT_LABEL, Value: 0 };
  const network = options.port ? { Mode: 'host', ReservedPorts: [port] } : { Mode: 'host', DynamicPorts: [port] };
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Region: options.region ?? 'global',
      Namespace: options.namespace ?? 'default',
      Datacenters: [...(options.datacenters ?? ['dc1'])],
      // Above the workloads' 50: when a cluster is full, the gateway is placed first.
      Priority: 70,
      Meta: { svc_component: 'server', svc_version: version, svc_managed_by: 'operator' },
      UI: jobUi(version, replicas, serviceName, options),
      TaskGroups: [
        {
          Name: GROUP,
          Count: replicas,
          // A normal rolling deploy: one replica at a time, each healthy in Consul for 10 s before the next.
          Update: {
            MaxParallel: 1,
            HealthCheck: 'checks',
            MinHealthyTime: 10 * SECOND,
            HealthyDeadline: 3 * MINUTE,
            ProgressDeadline: 10 * MINUTE,
            AutoRevert: true,
            Canary: 0,
            Stagger: 30 * SECOND,
          },
          Networks: [network],
          RestartPolicy: { Attempts: 3, Interval: 5 * MINUTE, Delay: 10 * SECOND, Mode: 'fail' },
          ReschedulePolicy: { Delay: 15 * SECOND, DelayFunction: 'exponential', MaxDelay: 5 * MINUTE, Unlimited: true },
          // alloc/data (svc's data dir) follows a replica to its replacement when Nomad can manage it.
          EphemeralDisk: { SizeMB: 1024, Sticky: true, Migrate: true },
          // Consul deregisters the replica 5 s before SIGTERM, so that proxies stop sending first.
          ShutdownDelay: 5 * SECOND,
          Meta: { svc_component: 'server' },
          Tasks: [serverTask(version, options)],
        },
      ],
    },
  };
}

function serverTask(version: string, options: SvcServerJobOptions): Task {
  const cli = options.cli ?? DEFAULT_CLI;
  const args = [cli, 'server', '--host', '0.0.0.0', '--port', `\${NOMAD_PORT_${PORT_LABEL}}`];
  const docker = options.driver === 'docker';
  const task: Task = {
    Name: TASK,
    Driver: docker ? 'docker' : 'raw_exec',
    Config: docker
      ? { image: options.image ?? `svc:${version}`, command: 'node', args, ports: [PORT_LABEL] }
      : { command: options.node ?? '/usr/bin/node', args },
    Env: serverEnv(options),
    Resources: { CPU: options.cpu ?? 1000, MemoryMB: options.memoryMB ?? 1024 },
    Services: [gatewayService(options)],
    LogConfig: { MaxFiles: 5, MaxFileSizeMB: 20 },
    // svc drains on SIGTERM: API calls get 5 s, workload requests finish; then it exits.
    KillTimeout: 35 * SECOND,
    KillSignal: 'SIGTERM',
  };
  if ((options.secrets ?? 'nomad-variables') === 'nomad-variables') {
    task.Templates = [tokensTemplate(options.jobId ?? 'svc'), secretsKeyTemplate(options.jobId ?? 'svc')];
    if (pushesImages(options)) task.Templates.push(registryPasswordTemplate(options.jobId ?? 'svc'));
  }
  return task;
}

/** svc on the cluster: workloads as Nomad jobs, state in Consul KV (so replicas elect a leader), the local agents' addresses. */
function serverEnv(options: SvcServerJobOptions): Record<string, string> {
  const env: Record<string, string> = {
    SVC_SCHEDULER: 'nomad',
    SVC_STATE: 'consul',
    SVC_NOMAD_DRIVER: options.workloadDriver ?? 'exec',
    NOMAD_ADDR: options.nomadAddr ?? `http://${NODE_IP}:4646`,
    CONSUL_HTTP_ADDR: options.consulAddr ?? `http://${NODE_IP}:8500`,
    SVC_DATA_DIR: options.dataDir ?? '${NOMAD_ALLOC_DIR}/data/svc',
    SVC_CACHE_DIR: '${NOMAD_ALLOC_DIR}/data/cache',
    // This replica's own address (host IP and port): followers forward the API to the leader's.
    SVC_ADVERTISE_URL: `http://\${NOMAD_ADDR_${PORT_LABEL}}`,
  };
  if ((options.secrets ?? 'nomad-variables') === 'nomad-variables') env.SVC_SECRETS_KEY_FILE = `\${NOMAD_SECRETS_DIR}/${SECRETS_KEY_FILE}`;
  if (options.workloadDriver === 'docker') {
    if (!options.imageRegistry)
      throw new Error('svcServerJob: workloadDriver "docker" needs imageRegistry, the registry svc pushes the workloads\' images to');
    env.SVC_IMAGE_REGISTRY = options.imageRegistry;
    if (options.imageBase) env.SVC_IMAGE_BASE = options.imageBase;
    if (options.imagePlatform) env.SVC_IMAGE_PLATFORM = options.imagePlatform;
    if (options.imageRegistryUsername) {
      env.SVC_IMAGE_REGISTRY_USERNAME = options.imageRegistryUsername;
      if ((options.secrets ?? 'nomad-variables') === 'nomad-variables')
        env.SVC_IMAGE_REGISTRY_PASSWORD_FILE = `\${NOMAD_SECRETS_DIR}/${REGISTRY_PASSWORD_FILE}`;
    }
  }
  if (options.publicUrl) env.SVC_PUBLIC_URL = options.publicUrl;
  if (options.baseDomain) env.SVC_BASE_DOMAIN = options.baseDomain;
  return env;
}

/** Tokens stay out of the job (anyone with read-job sees Env): Nomad renders them from a Variable the job may read. */
function tokensTemplate(jobId: string): Template {
  return {
    EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/${jobId}" }}\nNOMAD_TOKEN={{ .nomad_token }}\nCONSUL_HTTP_TOKEN={{ .consul_token }}\n{{ end }}\n`,
    DestPath: 'secrets/tokens.env',
    Envvars: true,
    ChangeMode: 'restart',
  };
}

/**
 * The registry password as a file svc reads (SVC_IMAGE_REGISTRY_PASSWORD_FILE), not an env
 * line: a password may hold `#` or quotes, which an env file would cut or misread.
 */
function registryPasswordTemplate(jobId: string): Template {
  return {
    EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/${jobId}" }}{{ .image_registry_password }}{{ end }}`,
    DestPath: `secrets/${REGISTRY_PASSWORD_FILE}`,
    Perms: '0400',
    ChangeMode: 'restart',
  };
}

/**
 * The keys that seal workspaces' secrets (core/services/secrets), which a Consul store requires and every
 * replica must share: a file svc reads (SVC_SECRETS_KEY_FILE) from the Variable's `secrets_key`.
 */
function secretsKeyTemplate(jobId: string): Template {
  return {
    EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/${jobId}" }}{{ .secrets_key }}{{ end }}`,
    DestPath: `secrets/${SECRETS_KEY_FILE}`,
    Perms: '0400',
    ChangeMode: 'restart',
  };
}

/** svc pushes images with an account: its password comes from the Variable, like the tokens. */
function pushesImages(options: SvcServerJobOptions): boolean {
  return options.workloadDriver === 'docker' && Boolean(options.imageRegistryUsername);
}

function gatewayService(options: SvcServerJobOptions): Service {
  return {
    Name: options.serviceName ?? 'svc',
    PortLabel: PORT_LABEL,
    Provider: 'consul',
    Tags: ['svc', 'svc-gateway', ...(options.proxyTags === false ? [] : gatewayRoutingTags())],
    Meta: { svc_component: 'server' },
    Checks: [
      {
        Name: 'gateway-health',
        Type: 'http',
        Path: HEALTH_PATH,
        Protocol: 'http',
        PortLabel: PORT_LABEL,
        Method: 'GET',
        Interval: 10 * SECOND,
        Timeout: 2 * SECOND,
        CheckRestart: { Limit: 3, Grace: 30 * SECOND, IgnoreWarnings: true },
      },
      {
        // Passing on the leader and on the followers that copied its routes: proxies routing by Consul health spread the traffic over them.
        Name: 'gateway-ready',
        Type: 'http',
        Path: READY_PATH,
        Protocol: 'http',
        PortLabel: PORT_LABEL,
        Method: 'GET',
        Interval: 2 * SECOND,
        Timeout: 2 * SECOND,
        // A replica waiting for a leader is healthy though not ready: its failing check must not fail the svc job's rolling deployments.
        OnUpdate: 'ignore',
      },
    ],
  };
}

/**
 * The gateway takes whatever the proxy has no more specific route for, on
 * every host: Fabio `urlprefix-/` (the longest prefix wins, so public
 * workloads' own `urlprefix-/<ws>/<app>/<workload>` routes go straight to
 * them) and a Traefik `PathPrefix(`/`)` router at priority 1 (the lowest).
 * Host-based workload URLs reach the gateway through the same catch-all.
 */
export function gatewayRoutingTags(): string[] {
  return ['urlprefix-/', 'traefik.enable=true', 'traefik.http.routers.svc.rule=PathPrefix(`/`)', 'traefik.http.routers.svc.priority=1'];
}

function jobUi(version: string, replicas: number, serviceName: string, options: SvcServerJobOptions): NonNullable<NomadJob['UI']> {
  const description = [
    `**svc server ${version}**: control plane, gateway and autoscaler of svc.`,
    `${replicas} replica${replicas === 1 ? '' : 's'} of group \`${GROUP}\`, Consul service \`${serviceName}\`, health \`${HEALTH_PATH}\`.`,
    'Scale with `nomad job scale ' +
      (options.jobId ?? 'svc') +
      ` ${GROUP} <n>\`. Workload jobs are named \`svc-<workspace>--<app>--<workload>\`.`,
  ].join('\n\n');
  const links = options.publicUrl
    ? [
        { Label: 'svc', URL: options.publicUrl },
        { Label: 'API', URL: `${options.publicUrl.replace(/\/+$/, '')}/api/v1` },
      ]
    : [];
  return links.length > 0 ? { Description: description, Links: links } : { Description: description };
}

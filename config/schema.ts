/**
 * The platform's configuration: what `svc serve` (and later `svc server`)
 * runs with. Every field has a config-file key and most have an SVC_*
 * variable and a flag; precedence is flags > environment > file > defaults
 * (see load.ts and docs/configuration.md).
 */
import type { QuotaTable } from '../core/model/quotas.js';
import type { UsagePrices } from '../core/services/usage/prices.js';
import { DEFAULT_USAGE_RETENTION_DAYS } from '../core/services/usage/usage-meter.js';
import { DEFAULT_RUN_LIMITS } from '../core/services/runs/limits.js';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_MAX_BODY_BYTES } from '../core/traffic/gateway/body-limit.js';
import type { PluginSpec } from '../core/infra/plugin/load.js';
import { DEFAULT_CALL_RESULT_TTL_SECONDS } from '../core/services/calls/calls.js';
import { BYTECODE_TIMINGS, INSTALLER_CHOICES, type BytecodeTiming, type InstallerChoice } from '../core/model/image-settings.js';
import { clusterDefaults, clusterKeys, type ClusterConfig } from './cluster-schema.js';
import { secretsDefaults, secretsKeys, type SecretsConfig } from './secrets-schema.js';
import { tlsDefaults, tlsKeys, type TlsConfig } from './tls-schema.js';

export interface ServerConfig extends ClusterConfig, TlsConfig, SecretsConfig {
  /** Interface the gateway listens on. */
  readonly host: string;
  /** Port the gateway listens on; 0 picks a free one. */
  readonly port: number;
  /** Durable state: owner token, later apps, deployments and tokens. */
  readonly dataDir: string;
  /** Rebuildable caches (image environments), shareable between data dirs. */
  readonly cacheDir: string;
  /** Interpreter used to read manifests, and for images when `pythonX.Y` is not on PATH. */
  readonly python: string;
  /** What installs images' packages: `auto` (uv, brought on first use; pip when uv cannot be had), `uv` (only uv) or `pip`. */
  readonly imageInstaller: InstallerChoice;
  /**
   * When an image's bytecode is compiled: `background` (the image is used as soon as its packages
   * are installed; containers that start meanwhile compile what they import) or `build` (before
   * the image is used, as pip does by default).
   */
  readonly imageBytecode: BytecodeTiming;
  /** A uv binary to build images with, instead of the one svc brings into the cache dir; null: svc's own. */
  readonly uvPath: string | null;
  /** Base URL printed for workloads; defaults to http://<host>:<port> (https:// with TLS). */
  readonly publicUrl: string | null;
  /** Largest request body the gateway forwards to a workload, in bytes (413 above it). */
  readonly maxBodyBytes: number;
  /**
   * Base domain for host-based workload URLs (`<app>-<workload>.<baseDomain>`); null serves
   * path-based URLs only. Needs a wildcard DNS record pointing at the gateway.
   */
  readonly baseDomain: string | null;
  /**
   * The DNS server that verifies custom domains (their `_svc-challenge` TXT
   * records), `host:port`; null asks the machine's own resolvers.
   */
  readonly dnsResolver: string | null;
  /** How long a request may wait in its deployment's queue for a slot, in seconds (then 503). */
  readonly queueTimeoutSeconds: number;
  /** How long a spawned call's outcome is kept once it ended, in whole seconds (then `expired`). */
  readonly callResultTtlSeconds: number;
  /** Remote runs one workspace may hold at once (`too_many_runs` past it); each starts containers. */
  readonly maxRunsPerWorkspace: number;
  /** Sets of parameters one `@app.cls` class may run at once in a workspace, each its own pool of containers. */
  readonly classParameterSets: number;
  /** Containers, CPU and memory each workspace may run at once (`quota_exceeded` past them); `*` for the others. */
  readonly workspaceQuotas: QuotaTable;
  /** How many days `svc usage` keeps each hour's figures (older ones are deleted). */
  readonly usageRetentionDays: number;
  /** Prices per CPU second and memory GiB-second: `svc usage` and the dashboard show a cost with them; null: no cost. */
  readonly usagePrices: UsagePrices | null;
  /** The most one volume may hold, in bytes (`volume_full` past it). */
  readonly volumeMaxBytes: number;
  /** The most all of a workspace's volumes may hold together, in bytes. */
  readonly workspaceVolumeBytes: number;
  /**
   * Completion callbacks may go to loopback, private (RFC 1918), link-local and unique-local
   * addresses and to svc's own: off by default, against server-side request forgery.
   */
  readonly callbackAllowPrivate: boolean;
  /** The autoscaling policy every deployment uses, by name (a plugin may add more). */
  readonly scalingPolicy: string;
  /** Third-party plugins: npm package names or paths, with options. */
  readonly plugins: readonly PluginSpec[];
  /**
   * Where the local driver looks for cgroup filesystems to limit containers'
   * cpu and memory: only mounts at or below this folder; null: any mount.
   */
  readonly cgroupRoot: string | null;
  /**
   * A file holding what `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv` prints: the
   * local driver's GPUs are read from it instead of nvidia-smi (tests, dry runs). Null: nvidia-smi.
   */
  readonly gpuInventory: string | null;
  /**
   * A second listener, `ip:port`, serving `GET /metrics` (Prometheus) without a token: for a
   * scraper on a network only it reaches. Null: none (`/metrics` on `port` takes the operator's token).
   */
  readonly metricsAddress: string | null;
}

export const DEFAULT_PORT = 7420;
export const DEFAULT_QUEUE_TIMEOUT_SECONDS = 30;
/** The built-in policy (plugins/autoscale-queue-depth). */
export const DEFAULT_SCALING_POLICY = 'queue-depth';

/** The most one volume holds unless the operator says otherwise (50 GiB), and a workspace's volumes together (200 GiB). */
export const DEFAULT_VOLUME_MAX_BYTES = 50 * 1024 ** 3;
export const DEFAULT_WORKSPACE_VOLUME_BYTES = 200 * 1024 ** 3;

export function configDefaults(home = os.homedir()): ServerConfig {
  return Object.freeze({
    host: '127.0.0.1',
    port: DEFAULT_PORT,
    dataDir: path.join(home, '.svc', 'data'),
    cacheDir: path.join(home, '.svc', 'cache'),
    python: 'python3',
    imageInstaller: 'auto',
    imageBytecode: 'background',
    uvPath: null,
    publicUrl: null,
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    baseDomain: null,
    dnsResolver: null,
    queueTimeoutSeconds: DEFAULT_QUEUE_TIMEOUT_SECONDS,
    callResultTtlSeconds: DEFAULT_CALL_RESULT_TTL_SECONDS,
    maxRunsPerWorkspace: DEFAULT_RUN_LIMITS.perWorkspace,
    classParameterSets: DEFAULT_RUN_LIMITS.parameterSetsPerClass,
    workspaceQuotas: Object.freeze({}),
    usagePrices: null,
    usageRetentionDays: DEFAULT_USAGE_RETENTION_DAYS,
    volumeMaxBytes: DEFAULT_VOLUME_MAX_BYTES,
    workspaceVolumeBytes: DEFAULT_WORKSPACE_VOLUME_BYTES,
    callbackAllowPrivate: false,
    scalingPolicy: DEFAULT_SCALING_POLICY,
    plugins: Object.freeze([]) as readonly PluginSpec[],
    cgroupRoot: null,
    gpuInventory: null,
    metricsAddress: null,
    ...clusterDefaults(),
    ...tlsDefaults(),
    ...secretsDefaults(),
  });
}

export interface ConfigKeySpec {
  /** svc's own variable. */
  readonly env: string | null;
  /** Read when `env` is unset: the variable Nomad's or Consul's own CLI reads. */
  readonly fallbackEnv?: string;
  readonly kind: string;
  /** The allowed values of an `enum`. */
  readonly values?: readonly string[];
  /** What an `existingFile` or `existingFolder` should be, for its error message. */
  readonly what?: string;
}

/** Each key: its environment variable and the kind of value it takes. */
export const configKeys = {
  host: { env: 'SVC_HOST', kind: 'string' },
  port: { env: 'SVC_PORT', kind: 'port' },
  dataDir: { env: 'SVC_DATA_DIR', kind: 'path' },
  cacheDir: { env: 'SVC_CACHE_DIR', kind: 'path' },
  python: { env: 'SVC_PYTHON', kind: 'string' },
  imageInstaller: { env: 'SVC_IMAGE_INSTALLER', kind: 'enum', values: INSTALLER_CHOICES },
  imageBytecode: { env: 'SVC_IMAGE_BYTECODE', kind: 'enum', values: BYTECODE_TIMINGS },
  uvPath: { env: 'SVC_UV', kind: 'existingFile', what: 'a uv binary' },
  publicUrl: { env: 'SVC_PUBLIC_URL', kind: 'url' },
  maxBodyBytes: { env: 'SVC_MAX_BODY_BYTES', kind: 'bytes' },
  baseDomain: { env: 'SVC_BASE_DOMAIN', kind: 'domain' },
  dnsResolver: { env: 'SVC_DNS_RESOLVER', kind: 'hostPort' },
  queueTimeoutSeconds: { env: 'SVC_QUEUE_TIMEOUT', kind: 'seconds' },
  callResultTtlSeconds: { env: 'SVC_CALL_RESULT_TTL', kind: 'retentionSeconds' },
  maxRunsPerWorkspace: { env: 'SVC_MAX_RUNS_PER_WORKSPACE', kind: 'count' },
  classParameterSets: { env: 'SVC_CLASS_PARAMETER_SETS', kind: 'count' },
  workspaceQuotas: { env: null, kind: 'quotas' },
  usagePrices: { env: null, kind: 'prices' },
  usageRetentionDays: { env: 'SVC_USAGE_RETENTION_DAYS', kind: 'count' },
  volumeMaxBytes: { env: 'SVC_VOLUME_MAX_BYTES', kind: 'bytes' },
  workspaceVolumeBytes: { env: 'SVC_WORKSPACE_VOLUME_BYTES', kind: 'bytes' },
  callbackAllowPrivate: { env: 'SVC_CALLBACK_ALLOW_PRIVATE', kind: 'boolean' },
  scalingPolicy: { env: 'SVC_SCALING_POLICY', kind: 'string' },
  plugins: { env: null, kind: 'plugins' },
  cgroupRoot: { env: 'SVC_CGROUP_ROOT', kind: 'existingFolder', what: 'where cgroup filesystems are mounted, such as /sys/fs/cgroup' },
  metricsAddress: { env: 'SVC_METRICS_ADDRESS', kind: 'listenAddress' },
  gpuInventory: { env: 'SVC_GPU_INVENTORY', kind: 'existingFile', what: "a file of nvidia-smi's GPU CSV (docs/gpus.md)" },
  ...clusterKeys,
  ...tlsKeys,
  ...secretsKeys,
} as const satisfies Record<keyof ServerConfig, ConfigKeySpec>;

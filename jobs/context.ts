/**
 * What the job compiler needs besides the workload: where the deployment
 * lives (workspace, app, stage, version), the code (entry module, bundle URL),
 * the image, and the cluster settings. Everything is an input: the compiler
 * reads no clock, no file and no environment.
 */
import type { Stage } from '../core/model/workload/deployment-ref.js';
import type { Driver } from './types.js';

/**
 * Nomad schedules CPU in MHz, svc's `cpu` option is in cores: one core is
 * taken as this many MHz (`cpu=0.5` → 1000 MHz). Nomad has no notion of a
 * fraction of a core, so this is a scheduling weight, not a hard cap; set
 * `mhzPerCore` to your clients' clock (`nomad node status -verbose` shows
 * `cpu.frequency`) or use `cpuMode: 'cores'` to reserve whole cores.
 */
export const DEFAULT_MHZ_PER_CORE = 2000;

export interface ClusterSettings {
  /** Nomad datacenters the jobs may run in; `["*"]` is every one. */
  readonly datacenters: readonly string[];
  readonly region: string;
  readonly namespace: string;
  /** `docker` runs `image`; `raw_exec` and `exec` run `python` on the client. */
  readonly driver: Driver;
  /** The platform docker images are built for: docker jobs are constrained to clients of its architecture. */
  readonly platform: 'linux/amd64' | 'linux/arm64';
  /** MHz per core of the `cpu` option (see DEFAULT_MHZ_PER_CORE). */
  readonly mhzPerCore: number;
  /** `mhz`: `Resources.CPU` = cpu × mhzPerCore; `cores`: `Resources.Cores` = cpu rounded up to whole cores. */
  readonly cpuMode: 'mhz' | 'cores';
  /** Interpreter raw_exec/exec run: one with the image's packages (and the runtime's requirements) installed. */
  readonly python: string;
  /**
   * `PYTHONPATH` of the task: where the `svc` package is on the clients, when
   * the interpreter does not have it installed; null leaves it unset.
   */
  readonly runtimePath: string | null;
  /**
   * Base domain of host-based URLs (`<app>-<workload>.<baseDomain>`) for the
   * Traefik `Host()` and Fabio host tags; null: path tags only.
   */
  readonly baseDomain: string | null;
  /** The svc gateway's public base URL, for the Nomad UI links; null: no links. */
  readonly publicUrl: string | null;
  /**
   * Which workloads get Fabio/Traefik routing tags. `public` (default): only
   * `authorized=False` ones, since a proxy routing straight to a container
   * skips svc's token check. `all` or `none` as said.
   */
  readonly proxyTags: 'public' | 'all' | 'none';
  /**
   * What svc volumes are on Nomad: `host`, dynamic host volumes over svc's own folders; `csi`, CSI
   * volumes of the plugin the operator names (`nomadCsiPlugin`).
   */
  readonly volumes: 'host' | 'csi';
}

export interface JobContext {
  readonly workspace: string;
  readonly app: string;
  readonly stage: Stage;
  /** The serial of a serving unit (`…/deployed@<serial>/…`), part of the job ID; absent for `svc jobs render`. */
  readonly serial?: number | undefined;
  /**
   * The ID the job is registered under: the Nomad driver's, from its unit key
   * (core/model/nomad-job-id.ts), which for a run holds the run id. The job's
   * services and secret templates are named after it. Absent (`svc jobs
   * render`): made from workspace, app, stage, workload and serial.
   */
  readonly jobId?: string | undefined;
  /** The deployment's version (1 for the first deploy); null when not known yet (svc records it once the containers run). */
  readonly version: number | null;
  /** The module that defines the svc.App (`AppSpec.entry`). */
  readonly entry: string;
  /** The code bundle (tar.gz): a signed, expiring URL, and its sha256 when known (go-getter checks it). */
  readonly bundle: { readonly url: string; readonly sha256: string | null };
  /** The image builder's image for the workload (`registry/name:tag`); needed by the docker driver. */
  readonly image: string | null;
  readonly cluster: ClusterSettings;
}

/** The cluster settings `svc jobs render` uses when no flag says otherwise. */
export const defaultClusterSettings: ClusterSettings = Object.freeze({
  datacenters: Object.freeze(['dc1']),
  region: 'global',
  namespace: 'default',
  driver: 'docker',
  platform: 'linux/amd64',
  mhzPerCore: DEFAULT_MHZ_PER_CORE,
  cpuMode: 'mhz',
  python: 'python3',
  runtimePath: null,
  baseDomain: null,
  publicUrl: null,
  proxyTags: 'public',
  volumes: 'host',
} satisfies ClusterSettings);

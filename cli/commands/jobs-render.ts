/**
 * `svc jobs render <app_or_module>[:<workload>]`: reads the app's manifest
 * (Python imports it), compiles every workload (or the one named) into the
 * Nomad job svc would submit, runs the plugins' `transformJob` hook,
 * validates each job strictly (jobs/validate.ts) and prints a JSON array of
 * registration bodies `[{"Job": {...}, "PreserveCounts": true}, ...]` on
 * stdout, ready for `PUT /v1/jobs`. Nothing is bundled, uploaded or
 * submitted: the bundle URL is a placeholder (the server signs real ones).
 * Validation problems go to stderr, one per JSON path, and exit 1.
 */
import path from 'node:path';
import { parseRegistryTarget } from '../../core/infra/images/oci/reference.js';
import { SvcError } from '../../core/model/errors.js';
import { DEFAULT_WORKSPACE, type Stage } from '../../core/model/deployment-keys.js';
import { loadManifest } from '../../core/infra/manifest-loader/load.js';
import { createPluginHost } from '../../core/infra/plugin/host.js';
import { loadPlugins, resolvePlugins, type PluginSpec } from '../../core/infra/plugin/load.js';
import type { Workload } from '../../core/model/workload/types.js';
import { loadConfig } from '../../config/load.js';
import type { ServerConfig } from '../../config/schema.js';
import { compileJob } from '../../jobs/compile.js';
import { defaultClusterSettings, type ClusterSettings, type JobContext } from '../../jobs/context.js';
import type { Driver, NomadJobRegistration } from '../../jobs/types.js';
import { formatIssues, validateJob } from '../../jobs/validate.js';
import { transformJob } from '../../core/infra/scheduler/nomad/transform-job.js';
import type { CommandContext } from '../context.js';
import { parseDeployTarget } from '../names.js';

export interface JobsRenderFlags {
  readonly driver?: string;
  /** One or more datacenters: repeat the flag or separate with commas. */
  readonly datacenter?: string | readonly string[];
  readonly region?: string;
  readonly namespace?: string;
  readonly stage?: string;
  readonly workspace?: string;
  /** Registry and prefix the image builder pushes to (`imageRegistry`'s form); the docker image is `<registry>/<image id>:latest`. */
  readonly registry?: string;
  readonly 'bundle-url'?: string;
  readonly 'base-domain'?: string;
  readonly 'mhz-per-core'?: string | number;
  /** Reserve whole cores (`Resources.Cores`) instead of MHz. */
  readonly cores?: boolean;
  readonly python?: string;
  /** A JSON config file (its `plugins`, `baseDomain`, `publicUrl`); default SVC_CONFIG. */
  readonly config?: string;
  /** Extra plugin modules (paths or packages) whose transformJob hooks run after the config's. */
  readonly plugin?: string | readonly string[];
}

/** Where images are named when neither --registry nor imageRegistry says. */
export const DEFAULT_REGISTRY = 'localhost:5000/svc';
/** `.invalid` never resolves: a rendered job is for reading; the server puts a signed URL here. */
export const PLACEHOLDER_BUNDLE_URL = 'https://svc.invalid/api/v1/bundles/BUNDLE_SHA256.tar.gz';
const drivers: readonly Driver[] = ['docker', 'raw_exec', 'exec'];

/** Prints the bodies and resolves them, or lists the problems on stderr and resolves 1. */
export default async function jobsRender(
  context: CommandContext,
  appOrModule: string,
  flags: JobsRenderFlags = {},
): Promise<NomadJobRegistration[] | number> {
  const { out } = context;
  const { target, workload: wanted } = parseDeployTarget(appOrModule);
  const stage = parseStage(flags.stage);
  const config = loadConfig({ file: flags.config, env: context.env as NodeJS.ProcessEnv, cwd: context.cwd });
  const cluster = clusterSettings(flags, config);
  const specs: PluginSpec[] = [
    ...config.plugins,
    ...list(flags.plugin).map((spec) => (spec.startsWith('.') ? path.resolve(context.cwd, spec) : spec)),
  ];
  const plugins = createPluginHost(resolvePlugins({ builtins: [], user: await loadPlugins(specs, { cwd: context.cwd }) }));

  out.step(`reading ${target}`);
  const manifest = await loadManifest({ target, cwd: context.cwd, python: context.env.SVC_PYTHON });
  for (const line of manifest.logs) out.log('import', line);
  const { spec } = manifest;
  const workloads = wanted === null ? spec.workloads : [findWorkload(spec.workloads, wanted, spec.name)];

  const workspace = flags.workspace ?? DEFAULT_WORKSPACE;
  const bodies: NomadJobRegistration[] = [];
  const problems: string[] = [];
  for (const workload of workloads) {
    const jobContext: JobContext = {
      workspace,
      app: spec.name,
      stage,
      version: 1,
      entry: spec.entry,
      bundle: { url: flags['bundle-url'] ?? PLACEHOLDER_BUNDLE_URL, sha256: null },
      image: `${imageRegistry(flags, config)}/${workload.image.id}:latest`,
      cluster,
    };
    const compiled = compileJob(workload, jobContext);
    const body = await transformJob(plugins, compiled, { workspace, app: spec.name, stage, workload: workload.name });
    const issues = validateJob(body);
    if (issues.length > 0) problems.push(`${workload.name} (${body.Job.ID}):\n${formatIssues(issues)}`);
    bodies.push(body);
  }
  if (problems.length > 0) {
    context.stderr.write(`svc: the Nomad jobs of ${spec.name} break the job rules:\n${problems.join('\n')}\n`);
    return 1;
  }
  out.done(
    `${bodies.length} Nomad job${bodies.length === 1 ? '' : 's'} for ${spec.name} (${cluster.driver}, ${cluster.datacenters.join(',')})`,
  );
  out.result(JSON.stringify(bodies, null, 2));
  return bodies;
}

/**
 * `host[:port][/prefix]` of the rendered images: --registry, else the config's imageRegistry.
 * `svc server` pins each image by digest once built; a render has built nothing, so it names a tag.
 */
function imageRegistry(flags: JobsRenderFlags, config: ServerConfig): string {
  const text = flags.registry ?? config.imageRegistry ?? DEFAULT_REGISTRY;
  const target = parseRegistryTarget(text);
  if ('problem' in target) throw new SvcError('usage_invalid', `--registry: ${target.problem}.`);
  return target.prefix === '' ? target.host : `${target.host}/${target.prefix}`;
}

/** Flags first, then the server's config (the same keys `svc server` submits jobs with). */
function clusterSettings(flags: JobsRenderFlags, config: ServerConfig): ClusterSettings {
  const driver = flags.driver ?? config.nomadDriver;
  if (!(drivers as readonly string[]).includes(driver)) {
    throw new SvcError('usage_invalid', `--driver must be one of ${drivers.join(', ')}, not ${JSON.stringify(driver)}.`);
  }
  const datacenters = list(flags.datacenter)
    .flatMap((dc) => dc.split(','))
    .map((dc) => dc.trim())
    .filter((dc) => dc !== '');
  const mhz = flags['mhz-per-core'] === undefined ? config.mhzPerCore : Number(flags['mhz-per-core']);
  if (!Number.isInteger(mhz) || mhz < 1)
    throw new SvcError('usage_invalid', `--mhz-per-core must be a whole number of MHz, not ${JSON.stringify(flags['mhz-per-core'])}.`);
  return {
    ...defaultClusterSettings,
    driver: driver as Driver,
    platform: config.imagePlatform,
    datacenters: datacenters.length > 0 ? datacenters : config.nomadDatacenters,
    region: flags.region ?? config.nomadRegion,
    namespace: flags.namespace ?? config.nomadNamespace,
    mhzPerCore: mhz,
    cpuMode: flags.cores ? 'cores' : config.cpuMode,
    python: flags.python ?? config.nomadPython ?? defaultClusterSettings.python,
    proxyTags: config.proxyTags,
    baseDomain: flags['base-domain'] ?? config.baseDomain,
    publicUrl: config.publicUrl,
    volumes: config.nomadCsiPlugin === null ? 'host' : 'csi',
  };
}

function parseStage(stage: string | undefined): Stage {
  if (stage === undefined || stage === 'deployed' || stage === 'preview') return stage ?? 'deployed';
  throw new SvcError('usage_invalid', `--stage must be deployed or preview, not ${JSON.stringify(stage)}.`);
}

function list(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** The workload `wanted` names: its name, or its Python function's (`say_hello` for `say-hello`). */
function findWorkload(workloads: readonly Workload[], wanted: string, app: string): Workload {
  const found = workloads.find((w) => w.name === wanted) ?? workloads.find((w) => w.handler === wanted);
  if (found === undefined) {
    throw new SvcError(
      'usage_invalid',
      `the app ${app} has no workload ${JSON.stringify(wanted)}; it has ${workloads.map((w) => w.name).join(', ')}.`,
      {
        hint: 'Name a workload as the app defines it, or leave out :<workload> to render every workload.',
      },
    );
  }
  return found;
}

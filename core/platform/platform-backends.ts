/**
 * Where workloads run and how the gateway finds them, from the config: the
 * service registry, the scheduler driver (local processes, or Nomad jobs
 * compiled by the unit compiler) and the image builder.
 */
import type { Autoscaler } from '../services/autoscale/controller.js';
import type { ArtifactUrls } from '../infra/bundles/artifact-url.js';
import type { AgentWatches } from './agent-watches.js';
import { createDriver, createRegistry, installOf } from './backends.js';
import { detachable, type DetachableDriver } from '../traffic/cluster/detachable-driver.js';
import { createImageBuilder } from './choose-builder.js';
import type { ImageBuilder } from '../infra/images/types.js';
import { sdkPythonPath } from '../model/paths.js';
import type { PluginHost } from '../infra/plugin/host.js';
import { quietWithoutConsul, type Wiring } from './platform-wiring.js';
import { ConsulRegistry } from '../infra/registry/consul.js';
import type { ServiceRegistry } from '../infra/registry/types.js';
import type { LocalDriver } from '../infra/scheduler/local/driver.js';
import type { NomadDriver } from '../infra/scheduler/nomad/types.js';
import { createUnitCompiler, type UnitCompilerOptions } from '../infra/scheduler/nomad/unit-compiler.js';
import type { LogSink } from '../infra/scheduler/types.js';
import type { GpuInventory } from '../infra/gpus/inventory.js';

export interface BackendNeeds {
  readonly plugins: PluginHost;
  readonly agents: AgentWatches;
  /** Where container lines go. */
  readonly sink: LogSink;
  readonly zygotes: boolean;
  readonly artifacts: ArtifactUrls | null;
  /** The autoscaler, built later on the driver: told of each container that exits. */
  readonly toAutoscaler: { target?: Autoscaler };
  /** The machine's GPUs (the embedded default); null on Nomad, whose clients have their own. */
  readonly gpus: GpuInventory | null;
}

export interface Backends {
  readonly registry: ServiceRegistry;
  /** The config's scheduler driver itself. */
  readonly scheduler: LocalDriver | NomadDriver;
  /** The scheduler as the platform uses it: a replica that lost the leadership lets go of the workloads. */
  readonly driver: DetachableDriver;
  readonly images: ImageBuilder;
  /** How units become Nomad jobs (also the periodic jobs of scheduled functions). */
  readonly unitCompilerOptions: UnitCompilerOptions;
  /** The GPUs a deploy is checked against (`gpu_unavailable`); null on Nomad, which places GPU work itself. */
  readonly gpus: GpuInventory | null;
}

export function buildBackends(wiring: Wiring, needs: BackendNeeds): Backends {
  const { config, options, state, metrics, system, reportAs } = wiring;
  const { plugins, agents, artifacts, toAutoscaler } = needs;
  const registry = createRegistry(config, quietWithoutConsul(agents, reportAs('REGISTRY')), metrics);
  // Watches that backed off while Consul was away read again as soon as it answers.
  if (registry instanceof ConsulRegistry) agents.consul?.onRecovered(() => registry.retryNow());
  const unitCompilerOptions: UnitCompilerOptions = {
    cluster: {
      datacenters: config.nomadDatacenters,
      region: config.nomadRegion,
      namespace: config.nomadNamespace,
      driver: config.nomadDriver,
      platform: config.imagePlatform,
      mhzPerCore: config.mhzPerCore,
      cpuMode: config.cpuMode,
      proxyTags: config.proxyTags,
      baseDomain: config.baseDomain,
      publicUrl: config.publicUrl,
      // raw_exec/exec run the image builder's environment, which sees the svc package through PYTHONPATH (as local containers do);
      // a docker image carries the package and its PYTHONPATH itself.
      runtimePath: config.nomadPython === null && config.nomadDriver !== 'docker' ? sdkPythonPath : null,
      volumes: config.nomadCsiPlugin === null ? 'host' : 'csi',
    },
    python: config.nomadPython,
    plugins,
    // The public URL when there is one: Nomad clients on other machines cannot reach 127.0.0.1.
    bundleUrl: (sha256) => artifacts!.url(config.publicUrl ?? state.url, sha256),
  };
  const scheduler = createDriver(config, {
    registry,
    logs: needs.sink,
    zygotes: needs.zygotes,
    cgroupRoot: config.cgroupRoot,
    gpus: needs.gpus?.devices ?? [],
    // `svc serve` (a state of its own) belongs to no installation: its jobs are never another svc's to purge, nor it theirs.
    install: options.state === undefined ? installOf(config) : undefined,
    onContainerExit: (unit, id, reason) => toAutoscaler.target?.containerExited(unit.key, id, reason),
    metrics,
    compile: createUnitCompiler(unitCompilerOptions),
  });
  const driver = detachable(scheduler);
  const images = createImageBuilder(config);
  if (images.name === 'oci') {
    system(
      `docker images: ${config.imageBase} plus svc's layers, for ${config.imagePlatform}, pushed to ${config.imageRegistry} ${config.imageRegistryUsername === null ? 'anonymously' : `as ${config.imageRegistryUsername}`}`,
    );
  }
  return { registry, scheduler, driver, images, unitCompilerOptions, gpus: needs.gpus };
}

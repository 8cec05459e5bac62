/**
 * Where the workspaces' volumes keep their files, from the config: folders of the data dir (the
 * embedded default, and Nomad's host volumes), or CSI volumes of the plugin the operator names on
 * Nomad (`nomadCsiPlugin`), served to svc by a keeper allocation each.
 */
import path from 'node:path';
import type { ServerConfig } from '../../config/schema.js';
import { pythonVersionOf } from '../infra/images/find-python.js';
import type { ImageBuilder } from '../infra/images/types.js';
import { CsiStorage } from '../infra/scheduler/nomad/csi-storage.js';
import { VolumeKeepers } from '../infra/scheduler/nomad/volume-keepers.js';
import type { UnitCompilerOptions } from '../infra/scheduler/nomad/unit-compiler.js';
import { FolderStorage } from '../infra/volumes/folder-storage.js';
import type { VolumeStorage } from '../infra/volumes/types.js';
import type { PlatformMetrics } from '../infra/metrics/platform-metrics.js';
import { csiVolumeOptions, nomadClientOf } from './backends.js';

export interface VolumeStorageNeeds {
  readonly config: ServerConfig;
  readonly images: ImageBuilder;
  readonly unitCompilerOptions: UnitCompilerOptions;
  readonly install: string | undefined;
  readonly metrics: PlatformMetrics;
}

/** The id of the image keepers run: svc's runtime and nothing else. */
const KEEPER_IMAGE_ID = 'svc-volume-keeper';

export function buildVolumeStorage(needs: VolumeStorageNeeds): VolumeStorage {
  const { config, images, unitCompilerOptions } = needs;
  const csi = csiVolumeOptions(config);
  if (config.scheduler !== 'nomad' || csi === undefined) return new FolderStorage(path.join(config.dataDir, 'volumes'));
  // resolveCluster refuses a CSI plugin with raw_exec: the keeper mounts the volume as the workloads do.
  const driver = config.nomadDriver === 'docker' ? 'docker' : 'exec';
  const client = nomadClientOf(config, needs.metrics);
  let runtime: Promise<{ python: string; image: string | null }> | null = null;
  const keepers = new VolumeKeepers({
    client,
    csi,
    cluster: { ...unitCompilerOptions.cluster, driver },
    install: needs.install,
    // The operator's interpreter, or the image builder's build of an image without packages (its
    // runtime layer: the interpreter on exec, a pushed image on docker), made once.
    runtime: () => {
      runtime ??= keeperRuntime(config, images).catch((error: unknown) => {
        runtime = null;
        throw error;
      });
      return runtime;
    },
  });
  return new CsiStorage(client, keepers, csi);
}

async function keeperRuntime(config: ServerConfig, images: ImageBuilder): Promise<{ python: string; image: string | null }> {
  if (config.nomadPython !== null && config.nomadDriver !== 'docker') return { python: config.nomadPython, image: null };
  const pythonVersion = (await pythonVersionOf(config.python)) ?? '3.11';
  const built = await images.build({ id: KEEPER_IMAGE_ID, pythonVersion, pythonPackages: [], requirementsFiles: [], env: {} }, () => {});
  return { python: built.pythonPath, image: built.image ?? null };
}

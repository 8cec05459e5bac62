/**
 * Which image builder a running svc uses: the OCI builder when Nomad's docker
 * driver runs the workloads (it pulls images from a registry), else the venv
 * builder (local containers and raw_exec/exec run a Python environment).
 */
import type { ServerConfig } from '../../config/schema.js';
import { createOciBuilder } from '../infra/images/oci/oci-builder.js';
import { parseRegistryTarget } from '../infra/images/oci/reference.js';
import type { ImageBuilder } from '../infra/images/types.js';
import { createVenvBuilder } from '../infra/images/venv-builder.js';

export function createImageBuilder(config: ServerConfig): ImageBuilder {
  if (config.scheduler !== 'nomad' || config.nomadDriver !== 'docker')
    return createVenvBuilder({
      cacheDir: config.cacheDir,
      python: config.python,
      installer: config.imageInstaller,
      uvPath: config.uvPath,
      bytecode: config.imageBytecode,
    });
  // The config loader checked both: docker needs a registry, and its value parses.
  const registry = parseRegistryTarget(config.imageRegistry!);
  if ('problem' in registry) throw new Error(`imageRegistry: ${registry.problem}`);
  return createOciBuilder({
    cacheDir: config.cacheDir,
    python: config.python,
    installer: config.imageInstaller,
    uvPath: config.uvPath,
    registry,
    credentials:
      config.imageRegistryUsername === null || config.imageRegistryPassword === null
        ? null
        : { username: config.imageRegistryUsername, password: config.imageRegistryPassword },
    base: config.imageBase,
    platform: config.imagePlatform,
  });
}

import { svcVersion } from '../../../model/paths.js';
import type { ImageSpec } from '../../../model/workload/types.js';
import { sharedBuild } from '../shared-builds.js';
import type { BuildLog } from '../types.js';
import type { Platform } from './base-image.js';
import { BUILDER_VERSION, buildHash } from './build-key.js';
import { PACKAGES_DIR, RUNTIME_DIR } from './defaults.js';
import type { SvcLayer } from './image-config.js';
import type { LayerCache } from './layer-cache.js';
import { copySdk, sdkDigest } from './sdk-files.js';
import type { LayerBlob } from './tar-layer.js';
import { describeInstall, installWheels } from './wheel-install.js';
import type { PackageInstaller } from '../installers.js';
import { withRequirementFiles } from '../requirement-files.js';

/**
 * svc's own layers of an image, each a reproducible tar kept in the layer
 * cache under a key of what it holds: the runtime (svc and its requirements)
 * and the image's packages, both installed as wheels for the target by the
 * build's installer (uv, or pip: installers.ts). A layer's `created_by` says
 * `pip install …` either way: it names what was asked, so that a layer's
 * history does not depend on which installer built it.
 */
export class SvcLayers {
  constructor(
    private readonly root: string,
    private readonly layers: LayerCache,
    /** The interpreter here that runs the installer. */
    private readonly python: string,
    private readonly platform: Platform,
    /** The installer of a layer build, said in its log. */
    private readonly installer: (emit: BuildLog) => Promise<PackageInstaller>,
  ) {}

  async runtime(spec: ImageSpec, requirements: readonly string[], emit: BuildLog): Promise<SvcLayer> {
    const { platform } = this;
    const key = `runtime-${buildHash({ v: BUILDER_VERSION, python: spec.pythonVersion, platform, requirements, sdk: await sdkDigest() })}`;
    const blob = await this.cachedLayer(key, RUNTIME_DIR, emit, async (dir, log) => {
      log(
        `building the runtime layer ${key}: svc ${svcVersion}, ${requirements.join(', ')} for Python ${spec.pythonVersion} on ${platform}`,
      );
      await copySdk(dir);
      const installer = await this.installer(log);
      await installWheels(
        {
          python: this.python,
          pythonVersion: spec.pythonVersion,
          platform,
          packages: requirements,
          into: dir,
          hint: "Could not get wheels of the runtime's own requirements for that platform and Python: check that the index is reachable (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf; UV_INDEX_URL for uv).",
        },
        installer,
        log,
      );
    });
    return { blob, path: RUNTIME_DIR, createdBy: `svc: the svc ${svcVersion} runtime (${requirements.join(' ')})` };
  }

  /** The image's own packages and requirements files (an image with either has this layer). */
  async packages(spec: ImageSpec, emit: BuildLog): Promise<SvcLayer> {
    const { platform } = this;
    const files = spec.requirementsFiles;
    // The files' text is part of the key only when there are some: the keys of images without any stay as they were.
    const key = `packages-${buildHash({ v: BUILDER_VERSION, python: spec.pythonVersion, platform, packages: spec.pythonPackages, ...(files.length > 0 ? { requirementsFiles: files } : {}) })}`;
    const what = describeInstall({ packages: spec.pythonPackages, requirementFiles: files.map((file) => file.name) });
    const blob = await this.cachedLayer(key, PACKAGES_DIR, emit, async (dir, log) => {
      log(`building the packages layer ${key}: ${what} for Python ${spec.pythonVersion} on ${platform}`);
      const installer = await this.installer(log);
      await withRequirementFiles(files, (requirementFiles) =>
        installWheels(
          {
            python: this.python,
            pythonVersion: spec.pythonVersion,
            platform,
            packages: spec.pythonPackages,
            requirementFiles,
            into: dir,
            hint: `Check the names and versions in Image.add_python_packages([...]) and the requirements files: each must have a wheel for ${platform} and Python ${spec.pythonVersion} (svc builds docker images without running the target's Python, so source-only packages cannot be installed).`,
          },
          installer,
          log,
        ),
      );
    });
    return { blob, path: PACKAGES_DIR, createdBy: `svc: pip install ${what}` };
  }

  /** A layer of svc's from the cache, or built once (builds of one key in this process at once share one). */
  private cachedLayer(key: string, under: string, emit: BuildLog, fill: (dir: string, log: BuildLog) => Promise<void>): Promise<LayerBlob> {
    return sharedBuild(
      `oci-layer:${this.root}:${key}`,
      emit,
      async (log) => (await this.layers.find(key)) ?? this.layers.build(key, under, (dir) => fill(dir, log)),
    );
  }
}

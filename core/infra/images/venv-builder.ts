import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { SvcError } from '../../model/errors.js';
import type { ImageSpec, RequirementsFile } from '../../model/workload/types.js';
import { moveIntoPlace, relocateVenv, removeAbandonedBuilds, temporaryPath } from './cache-entries.js';
import { asBuildError, forImage } from './build-errors.js';
import { findPython } from './find-python.js';
import type { BytecodeTiming, InstallerChoice } from '../../model/image-settings.js';
import { chooseInstaller, type Bytecode, type PackageInstaller } from './installers.js';
import { LaterBytecode, markBytecodeComplete } from './later-bytecode.js';
import { withRequirementFiles } from './requirement-files.js';
import { readRuntimeRequirements } from './runtime-requirements.js';
import { sharedBuild } from './shared-builds.js';
import type { BuildLog, BuiltImage, ImageBuilder } from './types.js';

const run = promisify(execFile);

/** Bump when the layout of a built environment changes, so old caches are not reused. */
const BUILDER_VERSION = 2;
/** Written last into every finished environment: what it is, and proof that it is complete. */
const MARKER = 'svc-image.json';
/** In an image's site-packages: one line, the runtime layer's site-packages. */
const LAYER_PTH = 'svc-runtime-layer.pth';

export interface VenvBuilderOptions {
  /** Built environments live in `<cacheDir>/images/`; shared by every data dir. */
  readonly cacheDir: string;
  /** The default interpreter (SVC_PYTHON), used when `pythonX.Y` is not on PATH. */
  readonly python: string;
  /** What installs packages (`imageInstaller`): `auto` by default. */
  readonly installer?: InstallerChoice;
  /** An operator's own uv (`uvPath`); null or absent: the one svc brings. */
  readonly uvPath?: string | null;
  /** When an image's bytecode is compiled (`imageBytecode`): `background` by default (later-bytecode.ts). */
  readonly bytecode?: BytecodeTiming;
}

export interface VenvBuilder extends ImageBuilder {
  /** The content address `build()` gives this image (`BuiltImage#key`), without building anything. */
  keyOf(spec: ImageSpec): Promise<string>;
  /** Resolves once the bytecode of every image built or used so far is compiled (later-bytecode.ts). */
  bytecodeSettled(): Promise<void>;
  /** Stops compiling bytecode (what is left is compiled when the image is next used). */
  close(): Promise<void>;
}

interface LayerMarker {
  readonly kind: 'runtime-layer';
  readonly key: string;
  readonly builderVersion: number;
  readonly pythonVersion: string;
  readonly requirements: readonly string[];
  /** site-packages, relative to the layer's folder. */
  readonly sitePackages: string;
  /** Changes whenever the layer is built again: images built over an older copy are rebuilt. */
  readonly buildId: string;
}

interface ImageMarker {
  readonly kind: 'image';
  readonly key: string;
  readonly builderVersion: number;
  readonly pythonVersion: string;
  readonly packages: readonly string[];
  readonly layer: string;
  readonly layerBuildId: string;
  readonly buildId: string;
}

interface Layer {
  readonly key: string;
  readonly dir: string;
  readonly pythonPath: string;
  readonly marker: LayerMarker;
  readonly cached: boolean;
}

/**
 * The embedded image builder. Environments come in two layers:
 *
 * - the **runtime layer**, `<cacheDir>/images/runtime-<hash>`: a venv with
 *   the runtime's own requirements (uvicorn…), one per Python version and
 *   requirements list, shared by every image. An image without packages *is*
 *   its runtime layer: no pip run at all.
 * - an **image with packages**, `<cacheDir>/images/venv-<hash>`: a venv
 *   without pip of its own, whose site-packages holds a `.pth` line naming
 *   the runtime layer's site-packages. Python puts the image's own
 *   site-packages first on sys.path and the layer after it, so the image's
 *   packages win over the layer's (a pinned `websockets==…` replaces the
 *   layer's); pip (the layer's) installs only what the layer does not
 *   already satisfy.
 *
 * Each environment is built in a temporary folder and renamed into place, so
 * the cache never holds a half-built one, even with two svc processes
 * building at once. pip runs with this process's environment, so pip's own
 * settings (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf, PIP_RETRIES…) apply.
 */
export function createVenvBuilder(options: VenvBuilderOptions): VenvBuilder {
  const root = path.join(path.resolve(options.cacheDir), 'images');

  async function prepareRoot(): Promise<void> {
    await mkdir(root, { recursive: true });
    await removeAbandonedBuilds(root);
  }

  const installer = (emit: BuildLog) => installerFor(options, emit);
  const bytecode = new LaterBytecode();

  function runtimeLayer(pythonVersion: string, requirements: readonly string[], log: BuildLog): Promise<Layer> {
    const key = runtimeLayerKey(pythonVersion, requirements);
    const dir = path.join(root, key);
    return sharedBuild(dir, log, async (emit) => {
      const found = await readLayer(dir);
      if (found) return { ...found, cached: true };
      // Before touching the cache dir: a missing Python leaves nothing behind.
      const python = await findPython(pythonVersion, options.python);
      await prepareRoot();
      emit(`creating a Python ${pythonVersion} environment: the runtime layer ${key} (${requirements.join(', ')})`);
      const using = await installer(emit);
      await buildInTemporary(root, key, (tmp) => buildRuntimeLayer({ python, pythonVersion, requirements, key, tmp, dir }, using, emit));
      const built = await readLayer(dir);
      if (!built) throw new SvcError('image_build_failed', `the runtime layer ${key} was built but is not usable (${dir}).`);
      return { ...built, cached: false };
    });
  }

  async function build(spec: ImageSpec, log: BuildLog): Promise<BuiltImage> {
    const requirements = await readRuntimeRequirements();
    if (!hasOwnEnvironment(spec)) {
      const layer = await runtimeLayer(spec.pythonVersion, requirements, log);
      return {
        key: layer.key,
        imageId: spec.id,
        pythonPath: layer.pythonPath,
        path: layer.dir,
        cached: layer.cached,
        runtimeLayer: layer.dir,
      };
    }
    const layerKey = runtimeLayerKey(spec.pythonVersion, requirements);
    const key = imageKey(spec, layerKey);
    const dir = path.join(root, key);
    const context: ImageContext = {
      root,
      bytecode: options.bytecode ?? 'background',
      prepareRoot,
      installer,
      runtimeLayer: (emit) => runtimeLayer(spec.pythonVersion, requirements, emit),
    };
    const { cached, layerDir, sitePackages } = await sharedBuild(dir, log, (emit) => ownEnvironment(context, spec, { key, dir }, emit));
    const pythonPath = path.join(dir, 'bin', 'python');
    bytecode.start(dir, pythonPath, sitePackages, log);
    return { key, imageId: spec.id, pythonPath, path: dir, cached, runtimeLayer: layerDir };
  }

  return {
    name: 'venv',
    async build(spec, log) {
      try {
        return await build(spec, log);
      } catch (error) {
        throw forImage(error, spec.id);
      }
    },
    keyOf,
    bytecodeSettled: () => bytecode.settled(),
    close: () => bytecode.close(),
  };
}

/** What building an image's own environment takes from its builder. */
interface ImageContext {
  readonly root: string;
  readonly bytecode: BytecodeTiming;
  prepareRoot(): Promise<void>;
  installer(emit: BuildLog): Promise<PackageInstaller>;
  runtimeLayer(emit: BuildLog): Promise<Layer>;
}

/** An image with packages at `dir`: found in the cache, or built over its runtime layer, its bytecode with the install or after it. */
async function ownEnvironment(
  context: ImageContext,
  spec: ImageSpec,
  { key, dir }: { readonly key: string; readonly dir: string },
  emit: BuildLog,
): Promise<{ cached: boolean; layerDir: string; sitePackages: string }> {
  const layer = await context.runtimeLayer(emit);
  const sitePackages = path.join(dir, layer.marker.sitePackages);
  if (await readImage(dir, layer)) return { cached: true, layerDir: layer.dir, sitePackages };
  await context.prepareRoot();
  const packages = [...spec.pythonPackages];
  const files = spec.requirementsFiles;
  const installs = [...packages, ...files.map((file) => `-r ${file.name}`)];
  emit(`creating a Python ${spec.pythonVersion} environment: ${key} with ${installs.join(', ')}, over the runtime layer ${layer.key}`);
  const using = await context.installer(emit);
  const bytecode = context.bytecode === 'build' ? 'now' : 'later';
  await buildInTemporary(context.root, key, (tmp) =>
    buildImage({ layer, pythonVersion: spec.pythonVersion, packages, files, key, tmp, dir, bytecode }, using, emit),
  );
  if (bytecode === 'later')
    emit('the image is ready; its bytecode compiles in the background (containers that start meanwhile compile what they import)');
  return { cached: false, layerDir: layer.dir, sitePackages };
}

/** What installs this builder's packages: uv, or pip as the options and the machine say. */
function installerFor(options: VenvBuilderOptions, emit: BuildLog): Promise<PackageInstaller> {
  return chooseInstaller(
    { choice: options.installer ?? 'auto', cacheDir: options.cacheDir, python: options.python, uvPath: options.uvPath ?? null },
    emit,
  );
}

/** The content address `build()` gives an image: its own environment's, or its runtime layer's. */
async function keyOf(spec: ImageSpec): Promise<string> {
  const layerKey = runtimeLayerKey(spec.pythonVersion, await readRuntimeRequirements());
  return hasOwnEnvironment(spec) ? imageKey(spec, layerKey) : layerKey;
}

/** Where one environment is built (`tmp`) and goes once built (`dir`), under its content address `key`. */
interface BuildPlace {
  readonly key: string;
  readonly tmp: string;
  readonly dir: string;
}

/** The runtime layer in `tmp`: a venv of `python` with the runtime's requirements, relocated to `dir`, then moved there. */
async function buildRuntimeLayer(
  {
    python,
    pythonVersion,
    requirements,
    key,
    tmp,
    dir,
  }: BuildPlace & { readonly python: string; readonly pythonVersion: string; readonly requirements: readonly string[] },
  installer: PackageInstaller,
  emit: BuildLog,
): Promise<void> {
  await installer.createVenv(python, tmp, emit);
  const tmpPython = path.join(tmp, 'bin', 'python');
  const { stdout } = await run(tmpPython, ['-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'], { timeout: 30_000 });
  // pip too: images over the layer use it when uv cannot be had, and a shell in a container may want it.
  await installer.install(
    tmpPython,
    [...requirements, 'pip'],
    emit,
    "the runtime's own requirements could not be installed: check that the installer can reach its index (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf, or uv's UV_* variables).",
    // Built once per machine and imported by every container: compiled before anything uses it.
    'now',
  );
  await relocateVenv(tmp, dir);
  const marker: LayerMarker = {
    kind: 'runtime-layer',
    key,
    builderVersion: BUILDER_VERSION,
    pythonVersion,
    requirements,
    sitePackages: path.relative(tmp, stdout.trim()),
    buildId: randomBytes(8).toString('hex'),
  };
  await writeFile(path.join(tmp, MARKER), JSON.stringify(marker, null, 2));
  if ((await moveIntoPlace(tmp, dir, async (d) => (await readLayer(d)) !== null)) === 'theirs') {
    emit(`another svc process built the runtime layer ${key} at the same time; using its copy`);
  }
}

/** An image in `tmp`: a venv over the runtime layer (its site-packages on the path) with the image's packages, relocated to `dir`, then moved there. */
async function buildImage(
  {
    layer,
    pythonVersion,
    packages,
    files,
    key,
    tmp,
    dir,
    bytecode,
  }: BuildPlace & {
    readonly bytecode: Bytecode;
    readonly layer: Layer;
    readonly pythonVersion: string;
    readonly packages: readonly string[];
    readonly files: readonly RequirementsFile[];
  },
  installer: PackageInstaller,
  emit: BuildLog,
): Promise<void> {
  // From the layer's interpreter: a venv made from a venv uses the same base Python.
  await installer.createVenv(layer.pythonPath, tmp, emit);
  const sitePackages = path.join(tmp, layer.marker.sitePackages);
  await mkdir(sitePackages, { recursive: true });
  await writeFile(path.join(sitePackages, LAYER_PTH), `${layerSitePackages(layer)}\n`);
  await withRequirementFiles(files, (written) =>
    installer.install(
      path.join(tmp, 'bin', 'python'),
      [...packages, ...written.flatMap((file) => ['-r', file])],
      emit,
      "Check the package names and versions in Image.add_python_packages([...]) and the image's requirements files, and that the installer can reach its index (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf, or uv's UV_* variables).",
      bytecode,
    ),
  );
  await relocateVenv(tmp, dir);
  // Compiled with the install: nothing is left to compile later.
  if (bytecode === 'now') await markBytecodeComplete(tmp);
  const marker: ImageMarker = {
    kind: 'image',
    key,
    builderVersion: BUILDER_VERSION,
    pythonVersion,
    packages,
    layer: layer.key,
    layerBuildId: layer.marker.buildId,
    buildId: randomBytes(8).toString('hex'),
  };
  await writeFile(path.join(tmp, MARKER), JSON.stringify(marker, null, 2));
  if ((await moveIntoPlace(tmp, dir, async (d) => await readImage(d, layer))) === 'theirs') {
    emit(`another svc process built the environment ${key} at the same time; using its copy`);
  }
}

/** The runtime layer's content address: Python version, the runtime's requirements, builder version. */
export function runtimeLayerKey(pythonVersion: string, requirements: readonly string[]): string {
  return `runtime-${hash({ v: BUILDER_VERSION, python: pythonVersion, requirements })}`;
}

/** Whether an image needs an environment of its own over the runtime layer: it installs something. */
function hasOwnEnvironment(spec: ImageSpec): boolean {
  return spec.pythonPackages.length > 0 || spec.requirementsFiles.length > 0;
}

/**
 * An image's content address: Python version, its packages in order, its requirements files'
 * names and content (only when it has some, so older keys stay), its runtime layer, builder version.
 */
export function imageKey(spec: ImageSpec, layerKey: string): string {
  const files = spec.requirementsFiles.length > 0 ? { requirementsFiles: spec.requirementsFiles } : {};
  return `venv-${hash({ v: BUILDER_VERSION, python: spec.pythonVersion, packages: spec.pythonPackages, ...files, layer: layerKey })}`;
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 20);
}

async function readMarker(dir: string): Promise<Record<string, unknown> | null> {
  try {
    const value: unknown = JSON.parse(await readFile(path.join(dir, MARKER), 'utf8'));
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A finished, usable runtime layer, or null. bin/python links to its base interpreter: if that is gone, it is not usable. */
async function readLayer(dir: string): Promise<Omit<Layer, 'cached'> | null> {
  const marker = await readMarker(dir);
  if (
    marker?.kind !== 'runtime-layer' ||
    marker.builderVersion !== BUILDER_VERSION ||
    typeof marker.sitePackages !== 'string' ||
    typeof marker.buildId !== 'string'
  )
    return null;
  const pythonPath = path.join(dir, 'bin', 'python');
  if (!existsSync(pythonPath) || !existsSync(path.join(dir, marker.sitePackages))) return null;
  return { key: path.basename(dir), dir, pythonPath, marker: marker as unknown as LayerMarker };
}

/** Where an image over `layer` finds the layer's packages (the line of its `.pth`). */
function layerSitePackages(layer: Omit<Layer, 'cached'>): string {
  return path.join(layer.dir, layer.marker.sitePackages);
}

/**
 * True for a finished image built over this very copy of its runtime layer,
 * whose `.pth` still names the layer where it is now: a cache dir copied or
 * moved elsewhere keeps its markers, but its images would name the old place.
 */
async function readImage(dir: string, layer: Omit<Layer, 'cached'>): Promise<boolean> {
  const marker = await readMarker(dir);
  if (
    marker?.kind !== 'image' ||
    marker.builderVersion !== BUILDER_VERSION ||
    marker.layer !== layer.key ||
    marker.layerBuildId !== layer.marker.buildId ||
    !existsSync(path.join(dir, 'bin', 'python'))
  )
    return false;
  const pth = await readFile(path.join(dir, layer.marker.sitePackages, LAYER_PTH), 'utf8').catch(() => '');
  return pth.trim() === layerSitePackages(layer);
}

/** Builds into a temporary dir beside the cache entry (the build moves it into place); a failed build leaves nothing behind. */
async function buildInTemporary(root: string, key: string, work: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = temporaryPath(root, key);
  try {
    await work(tmp);
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw asBuildError(error);
  }
}

/**
 * What makes an environment and installs packages into it: uv when it can be
 * had, pip otherwise. Both honour the index the operator gave pip (uv through
 * pip-settings.ts), and every build's log says which one built it.
 */
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import type { InstallerChoice } from '../../model/image-settings.js';
import { readPipConfig, uvSettingsFrom, type UvSettings } from './pip-settings.js';
import { runLogged } from './run-logged.js';
import type { BuildLog } from './types.js';
import { findUv, type UvTool } from './uv-tool.js';
import { PIP_INSTALL } from './pip-command.js';

/** When an install's bytecode is compiled: with the install, or after it by the caller. */
export type Bytecode = 'now' | 'later';

export interface PackageInstaller {
  /** For the log: "uv 0.13.9" or "pip". */
  readonly name: string;
  /** A virtual environment at `dir` from `python` (a venv's interpreter stands for its base one). */
  createVenv(python: string, dir: string, emit: BuildLog): Promise<void>;
  /**
   * Installs `requirements` (requirement strings, or `-r <file>` pairs) into the environment of
   * `python`, with their bytecode (`now`) or without it (`later`: later-bytecode.ts compiles it).
   */
  install(python: string, requirements: readonly string[], emit: BuildLog, hint: string, bytecode: Bytecode): Promise<void>;
  /**
   * Installs wheels of `requirements` into the folder `into` for another machine (an image's
   * platform and Python), never running code meant for it: only wheels qualify.
   */
  installForPlatform(target: PlatformInstall, emit: BuildLog, hint: string): Promise<void>;
}

/** What `installForPlatform` installs, and for which machine. */
export interface PlatformInstall {
  /** The interpreter here that runs the installer (never the target's). */
  readonly python: string;
  /** The target's Python, `3.11`. */
  readonly pythonVersion: string;
  readonly arch: 'x86_64' | 'aarch64';
  /** Requirement strings, or `-r <file>` pairs. */
  readonly requirements: readonly string[];
  readonly into: string;
}

/** `linux/amd64` or `linux/arm64`, as images name their platform. */
function platformOf(target: PlatformInstall): string {
  return target.arch === 'aarch64' ? 'linux/arm64' : 'linux/amd64';
}

/**
 * The newest glibc a wheel may need: 2.28 (Debian 10, RHEL 8), which every python:3.x-slim base
 * (Debian 12, glibc 2.36) has.
 */
const NEWEST_GLIBC_MINOR = 28;

/**
 * Every manylinux tag a glibc-2.28 system runs, newest first, as pip needs them: pip takes each
 * `--platform` literally (it does not add the older tags a newer one implies), so a wheel tagged
 * only manylinux_2_17/manylinux2014 needs its tag listed. (uv's `--python-platform` implies them.)
 */
function manylinuxPlatforms(arch: PlatformInstall['arch']): string[] {
  const tags: string[] = [];
  for (let minor = NEWEST_GLIBC_MINOR; minor >= 17; minor--) tags.push(`manylinux_2_${minor}_${arch}`);
  tags.push(`manylinux2014_${arch}`);
  // The two older legacy aliases exist for x86_64 (and i686) only.
  if (arch === 'x86_64') tags.push('manylinux2010_x86_64', 'manylinux1_x86_64');
  return tags;
}

export interface InstallerOptions {
  readonly choice: InstallerChoice;
  readonly cacheDir: string;
  /** The interpreter whose pip brings uv, and whose pip settings uv takes. */
  readonly python: string;
  readonly uvPath: string | null;
}

/** The installer of one build, said in its log: uv unless it cannot be had (then pip, or for `uv` an error) or pip is asked for. */
export async function chooseInstaller(options: InstallerOptions, emit: BuildLog): Promise<PackageInstaller> {
  if (options.choice === 'pip') {
    emit('installing with pip (imageInstaller is pip)');
    return pipInstaller;
  }
  const found = await findUv(options, emit);
  if ('why' in found) {
    if (options.choice === 'uv')
      throw new SvcError('image_build_failed', `uv is not available: ${found.why}`, {
        hint: 'Let pip reach uv on its index, set uvPath (SVC_UV) to a uv binary, or set imageInstaller (SVC_IMAGE_INSTALLER) to auto or pip.',
      });
    emit(`uv is not available (${found.why}): installing with pip`);
    return pipInstaller;
  }
  const settings = uvSettingsFrom(await readPipConfig(options.python));
  emit(`installing with ${found.uv.version}${settings.described.length ? `, with pip's settings: ${settings.described.join(', ')}` : ''}`);
  return uvInstaller(found.uv, settings, options.cacheDir);
}

/** uv's cache beside the images (same filesystem: uv links files instead of copying them), unless UV_CACHE_DIR says otherwise. */
function uvInstaller(uv: UvTool, settings: UvSettings, cacheDir: string): PackageInstaller {
  const env = {
    UV_CACHE_DIR: process.env.UV_CACHE_DIR || path.join(path.resolve(cacheDir), 'uv'),
    // Builds use the interpreters svc found; uv must not fetch one of its own.
    UV_PYTHON_DOWNLOADS: 'never',
    ...settings.env,
  };
  return {
    name: uv.version,
    async createVenv(python, dir, emit) {
      await runLogged(
        {
          command: uv.path,
          args: ['venv', '--no-config', '--python', python, dir],
          env,
          what: 'uv venv',
          hint: `Check that ${python} runs and that the cache dir has free space.`,
        },
        emit,
      );
    },
    async install(python, requirements, emit, hint, bytecode) {
      await runLogged(
        {
          command: uv.path,
          // Bytecode once, here or after: svc runs Python with PYTHONDONTWRITEBYTECODE, so without it every
          // container would compile each module it imports (FastAPI's import: 1.6 s against 0.7 s).
          args: [
            ...['pip', 'install', '--no-config', '--python', python],
            ...(bytecode === 'now' ? ['--compile-bytecode'] : []),
            ...settings.args,
            ...requirements,
          ],
          env,
          what: `uv pip install ${requirements.join(' ')}`,
          hint,
        },
        emit,
      );
    },
    async installForPlatform(target, emit, hint) {
      await runLogged(
        {
          command: uv.path,
          args: [
            ...['pip', 'install', '--no-config', '--python', target.python, '--target', target.into],
            // uv writes no .pyc files unless asked: they would hold the temporary folder's path.
            ...['--python-platform', `${target.arch}-manylinux_2_${NEWEST_GLIBC_MINOR}`, '--python-version', target.pythonVersion],
            ...['--only-binary', ':all:', ...settings.args, ...target.requirements],
          ],
          env,
          what: `uv pip install (for ${platformOf(target)}, Python ${target.pythonVersion}) ${target.requirements.join(' ')}`,
          hint,
        },
        emit,
      );
    },
  };
}

const pipInstaller: PackageInstaller = {
  name: 'pip',
  async createVenv(python, dir, emit) {
    await runLogged(
      {
        command: python,
        args: ['-m', 'venv', '--without-pip', dir],
        what: `${python} -m venv`,
        hint: 'Check that this Python can create virtual environments (on Debian: apt install python3-venv) and the cache dir has free space.',
      },
      emit,
    );
  },
  async install(python, requirements, emit, hint, bytecode) {
    // An environment over a runtime layer uses the layer's pip; one without any pip gets Python's own.
    await runLogged(
      {
        command: python,
        args: [
          '-c',
          'import importlib.util, runpy, sys\nif importlib.util.find_spec("pip") is None: runpy.run_module("ensurepip", run_name="__main__")',
        ],
        what: 'python -m ensurepip',
        hint: 'Check that this Python has ensurepip (on Debian: apt install python3-venv).',
      },
      emit,
    );
    await runLogged(
      {
        command: python,
        // pip compiles bytecode unless told not to.
        args: [...PIP_INSTALL, ...(bytecode === 'later' ? ['--no-compile'] : []), ...requirements],
        what: `pip install ${requirements.join(' ')}`,
        hint,
      },
      emit,
    );
  },
  async installForPlatform(target, emit, hint) {
    await runLogged(
      {
        command: target.python,
        args: [
          ...PIP_INSTALL,
          // .pyc files would hold the temporary folder's path and differ on every build.
          ...['--no-compile', '--target', target.into, '--only-binary=:all:'],
          ...manylinuxPlatforms(target.arch).flatMap((tag) => ['--platform', tag]),
          ...['--python-version', target.pythonVersion, '--implementation', 'cp', ...target.requirements],
        ],
        what: `pip install (for ${platformOf(target)}, Python ${target.pythonVersion}) ${target.requirements.join(' ')}`,
        hint,
      },
      emit,
    );
  },
};

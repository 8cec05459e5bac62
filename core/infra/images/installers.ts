/**
 * What makes an environment and installs packages into it: uv when it can be
 * had, pip otherwise. Both honour the index the operator gave pip (uv through
 * pip-settings.ts), and every build's log says which one built it.
 */
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import { readPipConfig, uvSettingsFrom, type UvSettings } from './pip-settings.js';
import { runLogged } from './run-logged.js';
import type { BuildLog } from './types.js';
import { findUv, type UvTool } from './uv-tool.js';
import { PIP_INSTALL } from './pip-command.js';

export type InstallerChoice = 'auto' | 'uv' | 'pip';

export interface PackageInstaller {
  /** For the log: "uv 0.13.9" or "pip". */
  readonly name: string;
  /** A virtual environment at `dir` from `python` (a venv's interpreter stands for its base one). */
  createVenv(python: string, dir: string, emit: BuildLog): Promise<void>;
  /** Installs `requirements` (requirement strings, or `-r <file>` pairs) into the environment of `python`. */
  install(python: string, requirements: readonly string[], emit: BuildLog, hint: string): Promise<void>;
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
    async install(python, requirements, emit, hint) {
      await runLogged(
        {
          command: uv.path,
          args: ['pip', 'install', '--no-config', '--python', python, ...settings.args, ...requirements],
          env,
          what: `uv pip install ${requirements.join(' ')}`,
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
  async install(python, requirements, emit, hint) {
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
        args: [...PIP_INSTALL, ...requirements],
        what: `pip install ${requirements.join(' ')}`,
        hint,
      },
      emit,
    );
  },
};

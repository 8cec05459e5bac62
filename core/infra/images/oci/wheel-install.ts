/**
 * Installs Python packages into a folder for the image's platform, not this
 * machine's: pip picks wheels by `--platform`/`--python-version`, so the
 * build never runs code meant for the target. Only wheels qualify (a source
 * package would have to be built, on the target's Python).
 */
import path from 'node:path';
import { runLogged } from '../run-logged.js';
import type { BuildLog } from '../types.js';
import type { Platform } from './base-image.js';
import { PIP_INSTALL } from '../pip-command.js';

/**
 * The newest glibc a wheel may need: 2.28 (Debian 10, RHEL 8), which every
 * python:3.x-slim base (Debian 12, glibc 2.36) has.
 */
const NEWEST_GLIBC_MINOR = 28;

/**
 * Every manylinux tag a glibc-2.28 system runs, newest first. pip takes each
 * `--platform` literally (it does not add the older tags a newer one implies),
 * so a wheel tagged only manylinux_2_17/manylinux2014 needs its tag listed.
 */
export function manylinuxPlatforms(arch: 'x86_64' | 'aarch64'): string[] {
  const tags: string[] = [];
  for (let minor = NEWEST_GLIBC_MINOR; minor >= 17; minor--) tags.push(`manylinux_2_${minor}_${arch}`);
  tags.push(`manylinux2014_${arch}`);
  // The two older legacy aliases exist for x86_64 (and i686) only.
  if (arch === 'x86_64') tags.push('manylinux2010_x86_64', 'manylinux1_x86_64');
  return tags;
}

export interface WheelInstall {
  /** The interpreter that runs pip (this machine's). */
  readonly python: string;
  readonly pythonVersion: string;
  readonly platform: Platform;
  readonly packages: readonly string[];
  /** Requirements files pip reads too (`-r`), after `packages`. */
  readonly requirementFiles?: readonly string[];
  readonly into: string;
  /** For errors: the hint when pip fails. */
  readonly hint: string;
}

export async function installWheels(install: WheelInstall, log: BuildLog): Promise<void> {
  const arch = install.platform === 'linux/arm64' ? 'aarch64' : ('x86_64' as const);
  await runLogged(
    {
      command: install.python,
      args: [
        ...PIP_INSTALL,
        // .pyc files would hold the temporary folder's path and differ on every build.
        '--no-compile',
        '--target',
        install.into,
        '--only-binary=:all:',
        ...manylinuxPlatforms(arch).flatMap((tag) => ['--platform', tag]),
        '--python-version',
        install.pythonVersion,
        '--implementation',
        'cp',
        ...install.packages,
        ...(install.requirementFiles ?? []).flatMap((file) => ['-r', file]),
      ],
      what: `pip install (for ${install.platform}, Python ${install.pythonVersion}) ${describeInstall(install)}`,
      hint: install.hint,
    },
    log,
  );
}

/** `six idna -r requirements.txt`: what an install holds, for logs and errors. */
export function describeInstall(install: Pick<WheelInstall, 'packages' | 'requirementFiles'>): string {
  return [...install.packages, ...(install.requirementFiles ?? []).map((file) => `-r ${path.basename(file)}`)].join(' ');
}

/**
 * Installs Python packages into a folder for the image's platform, not this
 * machine's: the installer (uv, or pip) picks wheels for the target's platform
 * and Python, so the build never runs code meant for the target. Only wheels
 * qualify (a source package would have to be built, on the target's Python).
 */
import path from 'node:path';
import type { PackageInstaller } from '../installers.js';
import type { BuildLog } from '../types.js';
import type { Platform } from './base-image.js';

export interface WheelInstall {
  /** The interpreter here that runs the installer. */
  readonly python: string;
  readonly pythonVersion: string;
  readonly platform: Platform;
  readonly packages: readonly string[];
  /** Requirements files read too (`-r`), after `packages`. */
  readonly requirementFiles?: readonly string[];
  readonly into: string;
  /** For errors: the hint when the install fails. */
  readonly hint: string;
}

export async function installWheels(install: WheelInstall, installer: PackageInstaller, log: BuildLog): Promise<void> {
  await installer.installForPlatform(
    {
      python: install.python,
      pythonVersion: install.pythonVersion,
      arch: install.platform === 'linux/arm64' ? 'aarch64' : 'x86_64',
      requirements: [...install.packages, ...(install.requirementFiles ?? []).flatMap((file) => ['-r', file])],
      into: install.into,
    },
    log,
    install.hint,
  );
}

/** `six idna -r requirements.txt`: what an install holds, for logs and errors. */
export function describeInstall(install: Pick<WheelInstall, 'packages' | 'requirementFiles'>): string {
  return [...install.packages, ...(install.requirementFiles ?? []).map((file) => `-r ${path.basename(file)}`)].join(' ');
}

/**
 * Installs Python packages into a folder for the image's platform, not this
 * machine's: pip picks wheels by `--platform`/`--python-version`, so the
 * build never runs code meant for the target. Only wheels qualify (a source
 * package would have to be built, on the target's Python).
 */
import { runLogged } from '../run-logged.js';
import type { BuildLog } from '../types.js';
import type { Platform } from './base-image.js';

/**
 * glibc 2.28 (Debian 10, RHEL 8) and older: the manylinux tags every
 * python:3.x-slim base (Debian 12, glibc 2.36) runs; pip also accepts every
 * older manylinux tag for the newest one named.
 */
const MANYLINUX = 'manylinux_2_28';

export interface WheelInstall {
  /** The interpreter that runs pip (this machine's). */
  readonly python: string;
  readonly pythonVersion: string;
  readonly platform: Platform;
  readonly packages: readonly string[];
  readonly into: string;
  /** For errors: the hint when pip fails. */
  readonly hint: string;
}

export async function installWheels(install: WheelInstall, log: BuildLog): Promise<void> {
  const arch = install.platform === 'linux/arm64' ? 'aarch64' : 'x86_64';
  await runLogged(
    {
      command: install.python,
      args: [
        '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input',
        // .pyc files would hold the temporary folder's path and differ on every build.
        '--no-compile',
        '--target', install.into,
        '--only-binary=:all:', '--platform', `${MANYLINUX}_${arch}`, '--python-version', install.pythonVersion, '--implementation', 'cp',
        ...install.packages,
      ],
      what: `pip install (for ${install.platform}, Python ${install.pythonVersion}) ${install.packages.join(' ')}`,
      hint: install.hint,
    },
    log,
  );
}

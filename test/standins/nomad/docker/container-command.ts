/**
 * The host command line that runs a container's process: a private mount namespace (so the bind
 * mounts of the task directories vanish with the container's last process, however the stand-in
 * ends), the task directories bound at /alloc, /local, /secrets as Nomad's docker driver binds them
 * (drivers/docker/driver.go containerBinds, alloc/logs read-only), /proc, then chroot(2) into the
 * rootfs and chdir to the working directory (util-linux `unshare --root --wd`: coreutils chroot
 * cannot change into a directory other than /), and exec of the command on the image's PATH.
 * Network, PID and user namespaces are the host's.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { resolveInRoot } from './root-path.js';

const UNSHARE = '/usr/bin/unshare';
const MOUNT = '/usr/bin/mount';

const SETUP = [
  'set -e',
  'root=$1; alloc=$2; local=$3; secrets=$4; wd=$5; shift 5',
  `${MOUNT} --bind "$alloc" "$root/alloc"`,
  `${MOUNT} --bind "$alloc/logs" "$root/alloc/logs"`,
  `${MOUNT} -o remount,bind,ro "$root/alloc/logs"`,
  `${MOUNT} --bind "$local" "$root/local"`,
  `${MOUNT} --bind "$secrets" "$root/secrets"`,
  `${MOUNT} -t proc proc "$root/proc"`,
  `exec ${UNSHARE} --root="$root" --wd="$wd" -- "$@"`,
].join('\n');

export interface ContainerDirs {
  readonly rootfs: string;
  readonly allocDir: string;
  readonly localDir: string;
  readonly secretsDir: string;
}

/** `[file, ...args]` to spawn on the host. */
export function containerCommand(dirs: ContainerDirs, workDir: string, argv: readonly string[]): [string, ...string[]] {
  return [
    UNSHARE,
    '--mount',
    '--propagation',
    'private',
    '/bin/sh',
    '-c',
    SETUP,
    'container',
    dirs.rootfs,
    dirs.allocDir,
    dirs.localDir,
    dirs.secretsDir,
    workDir,
    ...argv,
  ];
}

/** Where a container path is on the host: under a bound task directory, else in the rootfs. */
function hostPathOf(dirs: ContainerDirs, inner: string): string {
  const binds: Array<[string, string]> = [
    ['/alloc', dirs.allocDir],
    ['/local', dirs.localDir],
    ['/secrets', dirs.secretsDir],
  ];
  for (const [point, host] of binds) {
    if (inner === point || inner.startsWith(`${point}/`)) return resolveInRoot(host, inner.slice(point.length), true);
  }
  return resolveInRoot(dirs.rootfs, inner, true);
}

/** Finds argv[0] in the container as execvp would on `PATH`; null when the container could not start it. */
export function findExecutable(dirs: ContainerDirs, command: string, pathVariable: string, workDir: string): string | null {
  const candidates = command.includes('/')
    ? [path.posix.resolve(workDir, command)]
    : pathVariable
        .split(':')
        .filter(Boolean)
        .map((dir) => path.posix.join(dir, command));
  return candidates.find((candidate) => existsSync(hostPathOf(dirs, candidate))) ?? null;
}

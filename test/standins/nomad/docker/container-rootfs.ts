/**
 * A container's root filesystem on disk: the image's layers unpacked, the mount points Nomad's task
 * directories are bound to, and the device nodes Docker gives every container; removed again when
 * the container ends.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { unpackLayersInWorker } from './unpack-in-worker.js';
import { resolveInRoot } from './root-path.js';

const run = promisify(execFile);

/** The character devices every Docker container has in /dev (major 1 = mem devices). */
const DEVICES: ReadonlyArray<[string, number]> = [
  ['null', 3],
  ['zero', 5],
  ['random', 8],
  ['urandom', 9],
];

export const TASK_MOUNTS = ['alloc', 'local', 'secrets'] as const;

export async function createRootfs(rootfs: string, layers: readonly string[]): Promise<void> {
  removeRootfs(rootfs);
  // Off the event loop: the Consul stand-in and the platform in this process must go on answering.
  await unpackLayersInWorker(rootfs, layers);
  for (const dir of [...TASK_MOUNTS, 'dev', 'proc', 'tmp']) mkdirSync(resolveInRoot(rootfs, dir, true), { recursive: true });
  for (const [name, minor] of DEVICES) {
    const node = resolveInRoot(rootfs, `/dev/${name}`, false);
    rmSync(node, { force: true });
    await run('/usr/bin/mknod', ['-m', '666', node, 'c', '1', String(minor)]);
  }
}

/** Mount points at or under `dir` in this process's mount namespace. */
export function mountsUnder(dir: string): string[] {
  const points: string[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const point = line.split(' ')[4]?.replace(/\\040/g, ' ');
    if (point && (point === dir || point.startsWith(`${dir}/`))) points.push(point);
  }
  return points;
}

/**
 * Deletes the rootfs. Its bind mounts live in the container's own mount namespace and went with
 * it; should one be visible here all the same, it is detached first so that deleting the rootfs
 * can never reach into the task directories behind it.
 */
export function removeRootfs(rootfs: string): void {
  for (const point of mountsUnder(rootfs).sort().reverse()) {
    try {
      execFileSync('/usr/bin/umount', ['-l', point], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
  if (mountsUnder(rootfs).length > 0) throw new Error(`cannot remove ${rootfs}: still mounted`);
  rmSync(rootfs, { recursive: true, force: true });
}

export function rootfsPathOf(taskDir: string): string {
  return path.join(taskDir, 'rootfs');
}

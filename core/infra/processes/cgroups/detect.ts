/**
 * Which cgroup version svc can use here, and where its own cgroup is: v2
 * when a cgroup2 filesystem offers the cpu and memory controllers, else v1
 * when cpu and memory hierarchies are mounted. Read from mountinfo and
 * /proc/self/cgroup, never from assumed paths.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseMountinfo, type Mount } from './mountinfo.js';
import { parseSelfCgroup } from './self-cgroup.js';
import type { CgroupDirs, CgroupFiles } from './types.js';
import { v1Files } from './v1.js';
import { V2_CONTROLLERS, v2Files } from './v2.js';

export interface DetectInput {
  /** The text of /proc/self/mountinfo. */
  readonly mountinfo: string;
  /** The text of /proc/self/cgroup. */
  readonly selfCgroup: string;
  /** Only mounts at or below this folder count; null: any. */
  readonly under: string | null;
  /** The controllers a v2 cgroup folder offers (its `cgroup.controllers`); null when unreadable. */
  readonly controllersOf?: (dir: string) => readonly string[] | null;
}

/** svc's own cgroup (its folder per controller) and the files of its version. */
export interface CgroupLayout {
  readonly files: CgroupFiles;
  readonly own: CgroupDirs;
}

export type Detection = { readonly layout: CgroupLayout } | { readonly unavailable: string };

export function detectCgroups(input: DetectInput): Detection {
  const under = input.under === null ? null : path.resolve(input.under);
  const mounts = parseMountinfo(input.mountinfo).filter((mount) => under === null || isWithin(mount.mountPoint, under));
  const membership = parseSelfCgroup(input.selfCgroup);
  const controllersOf = input.controllersOf ?? readControllers;
  const where = under === null ? '' : ` under ${under}`;

  let v2Problem = `no cgroup2 filesystem is mounted${where}`;
  const unified = mounts.find((mount) => mount.fsType === 'cgroup2');
  if (unified) {
    const dir = locate(unified, membership.unified ?? '/');
    const offered = controllersOf(dir);
    const missing = V2_CONTROLLERS.filter((controller) => !offered?.includes(controller));
    if (missing.length === 0) return { layout: { files: v2Files, own: { cpu: dir, memory: dir, cpuacct: dir } } };
    v2Problem =
      offered === null
        ? `cgroup2 at ${unified.mountPoint} cannot be read`
        : `cgroup2 at ${unified.mountPoint} has no ${missing.join(' and ')} controller for svc's cgroup`;
  }

  const hierarchy = (controller: string) => {
    const mount = mounts.find((m) => m.fsType === 'cgroup' && m.superOptions.includes(controller));
    return mount && locate(mount, membership.v1.get(controller) ?? '/');
  };
  const [cpu, memory, cpuacct] = [hierarchy('cpu'), hierarchy('memory'), hierarchy('cpuacct')];
  if (cpu !== undefined && memory !== undefined) return { layout: { files: v1Files, own: { cpu, memory, cpuacct: cpuacct ?? null } } };
  const absent = [cpu === undefined && 'cpu', memory === undefined && 'memory'].filter(Boolean).join(' and ');
  return { unavailable: `${v2Problem}, and no cgroup v1 ${absent} hierarchy is mounted${where}` };
}

/** Reads and detects from this process's own /proc files. */
export function detectOwnCgroups(under: string | null): Detection {
  let mountinfo: string;
  let selfCgroup: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    selfCgroup = readFileSync('/proc/self/cgroup', 'utf8');
  } catch (error) {
    return { unavailable: `this system has no cgroups to read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  return detectCgroups({ mountinfo, selfCgroup, under });
}

/**
 * The folder of a cgroup path on a mount: the mount shows its filesystem's
 * `root`, so a path below it is under the mount point; one outside what the
 * mount shows (another cgroup namespace) falls back to the mount point.
 */
function locate(mount: Mount, cgroupPath: string): string {
  if (cgroupPath.split('/').includes('..')) return mount.mountPoint;
  const below = (relative: string) => path.resolve(mount.mountPoint, `.${relative}`);
  if (mount.root === '/') return below(cgroupPath);
  if (cgroupPath === mount.root || cgroupPath.startsWith(`${mount.root}/`)) return below(cgroupPath.slice(mount.root.length));
  return mount.mountPoint;
}

function isWithin(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function readControllers(dir: string): readonly string[] | null {
  try {
    return readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  } catch {
    return null;
  }
}

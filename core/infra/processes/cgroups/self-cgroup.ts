/**
 * `/proc/self/cgroup` (cgroups(7)): the cgroup this process is in, per
 * hierarchy. svc makes its containers' cgroups below its own, so that
 * whatever limits svc itself runs under also bound its containers.
 */

export interface Membership {
  /** The v2 (unified) hierarchy's path, from the `0::<path>` line; null without one. */
  readonly unified: string | null;
  /** Each v1 controller's path (`memory` → `/user.slice`), named controllers (`name=systemd`) included. */
  readonly v1: ReadonlyMap<string, string>;
}

export function parseSelfCgroup(text: string): Membership {
  let unified: string | null = null;
  const v1 = new Map<string, string>();
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .forEach((line, index) => {
      // hierarchy-ID:controller-list:cgroup-path; the path may itself hold colons.
      const match = /^(\d+):([^:]*):(.*)$/.exec(line);
      if (!match) throw new Error(`/proc/self/cgroup line ${index + 1} is not "<id>:<controllers>:<path>": ${line}`);
      const [, id, controllers, cgroupPath] = match as unknown as [string, string, string, string];
      if (id === '0' && controllers === '') unified = cgroupPath;
      else for (const controller of controllers.split(',')) v1.set(controller, cgroupPath);
    });
  return { unified, v1 };
}

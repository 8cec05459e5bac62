/**
 * `/proc/self/mountinfo` (proc(5)): which filesystems are mounted where.
 * svc reads it to find the cgroup filesystems instead of assuming
 * `/sys/fs/cgroup`.
 */

export interface Mount {
  /** Where it is mounted, e.g. `/sys/fs/cgroup/memory`. */
  readonly mountPoint: string;
  /** The folder of the filesystem that appears there (`/` unless a bind mount or a cgroup namespace). */
  readonly root: string;
  /** `cgroup`, `cgroup2`, `ext4`, ... */
  readonly fsType: string;
  /** Per-superblock options: for a cgroup v1 mount they name its controllers (`rw,cpu,cpuacct`). */
  readonly superOptions: readonly string[];
}

/** Every mount of a mountinfo text; a line that is not in the format is an error naming it. */
export function parseMountinfo(text: string): Mount[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      // 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
      const fields = line.split(' ');
      const separator = fields.indexOf('-', 6);
      if (fields.length < 10 || separator < 0 || fields.length < separator + 4) {
        throw new Error(
          `mountinfo line ${index + 1} is not "<id> <parent> <dev> <root> <mount point> <options> [fields] - <type> <source> <options>": ${line}`,
        );
      }
      return {
        root: unescapeOctal(fields[3]!),
        mountPoint: unescapeOctal(fields[4]!),
        fsType: fields[separator + 1]!,
        superOptions: fields[separator + 3]!.split(','),
      };
    });
}

/** The kernel writes space, tab, newline and backslash in paths as `\040`-style octal escapes. */
function unescapeOctal(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

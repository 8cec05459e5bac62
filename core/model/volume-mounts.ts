/**
 * Where a workload's containers see a volume: `volumes={"/data": vol}` in the SDK, a `volumes` list in
 * the manifest. The path is absolute, as in a container; it may not be `/`, a folder the system needs
 * (a bind mount over `/usr` would hide Python itself), nor inside or above another mount of the same
 * workload. The SDK keeps the same list (sdk/python/svc/_mounts.py); the runtime refuses, besides, a
 * path over the app's own code and svc's folders, which only it knows (sdk/python/svc/runtime/_mounts.py).
 */

/**
 * The variable that tells a container's runtime what to mount before it imports the app: a JSON list of
 * `{"path", "source", "read_only"}` (sdk/python/svc/runtime/_mounts.py reads it).
 */
export const VOLUME_MOUNTS_ENV = 'SVC_VOLUME_MOUNTS';

/** At most this many volumes per workload. */
export const MAX_VOLUME_MOUNTS = 16;
/** The longest mount path, in characters. */
export const MAX_MOUNT_PATH_CHARS = 512;

/** Folders a volume may be mounted neither at nor inside: what the system and Python run from. */
export const SYSTEM_MOUNT_PATHS: readonly string[] = Object.freeze([
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/proc',
  '/run',
  '/sbin',
  '/sys',
  '/usr',
]);
/** Folders a volume may be mounted inside but not at: replacing all of them would hide what others keep there. */
export const SHARED_MOUNT_PATHS: readonly string[] = Object.freeze(['/tmp', '/var']);

/** One volume as a workload mounts it. */
export interface VolumeMount {
  /** Absolute, normalized: `/data`, never `/data/` nor `/a/../b`. */
  readonly path: string;
  /** The volume's name in the workload's workspace. */
  readonly volume: string;
  /** Mounted read-only (`vol.read_only()`): a write fails with EROFS. */
  readonly readOnly: boolean;
}

/** `a` is `b`, or one holds the other: two mounts there would hide one another. */
export function mountPathsOverlap(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** What is wrong with `path` as the place of a mount, or null. */
export function mountPathProblem(path: string): string | null {
  if (path.length > MAX_MOUNT_PATH_CHARS) return `is longer than ${MAX_MOUNT_PATH_CHARS} characters`;
  if (path.includes('\0')) return 'contains a NUL character';
  if (!path.startsWith('/')) return 'is not absolute: mount a volume at a path such as "/data"';
  if (path === '/') return 'is "/": a volume cannot replace the whole file system; mount it at a folder such as "/data"';
  const parts = path.slice(1).split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) {
    return 'is not a plain absolute path: write it without "//", "." or "..", and without a trailing "/"';
  }
  const system = SYSTEM_MOUNT_PATHS.find((folder) => path === folder || path.startsWith(`${folder}/`));
  if (system !== undefined) return `is in ${system}, which the system needs: mount it at a folder such as "/data"`;
  if (SHARED_MOUNT_PATHS.includes(path)) return `is ${path} itself: mount it at a folder inside, such as "${path}/data", or at "/data"`;
  return null;
}

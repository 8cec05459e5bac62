/**
 * Paths inside a volume, as the API, the CLI and the SDK name them: relative to the volume's root,
 * `/`-separated, never leaving it. `""` (or `.`) is the root itself. What a path may not be is
 * refused here, before any file is touched; where a path leads on disk (a symbolic link a
 * container made) is checked where the files are (core/services/volumes/files.ts).
 */
import { SvcError } from './errors.js';

/** The longest path, in characters, and the longest name in it, in bytes (Linux's NAME_MAX). */
export const MAX_VOLUME_PATH_CHARS = 1024;
export const MAX_VOLUME_NAME_BYTES = 255;

/**
 * Uploads under way, and files an upload replaced until it removes them, are files with this prefix beside
 * their target: never listed nor counted, so no path may name one.
 */
export const UPLOAD_PREFIX = '.svc-upload-';

/** What is wrong with `path` as a path in a volume, or null. */
export function volumePathProblem(path: string): string | null {
  if (path.length > MAX_VOLUME_PATH_CHARS) return `is longer than ${MAX_VOLUME_PATH_CHARS} characters`;
  if (path.includes('\0')) return 'contains a NUL character';
  if (path.startsWith('/')) return 'is absolute: paths are relative to the volume\'s root, like "models/small.bin"';
  if (path.includes('\\')) return 'contains "\\": separate folders with "/"';
  for (const part of path.split('/')) {
    if (part === '..') return 'contains "..": a path may not leave the volume';
    if (part.startsWith(UPLOAD_PREFIX)) return `has a name that starts with "${UPLOAD_PREFIX}", which svc keeps for uploads under way`;
    if (Buffer.byteLength(part) > MAX_VOLUME_NAME_BYTES) return `has a name longer than ${MAX_VOLUME_NAME_BYTES} bytes`;
  }
  return null;
}

/**
 * `path` as a list of names (empty for the root), `bad_request` naming the problem when it is not a
 * path in a volume. Empty names and `.` are dropped: `a//b/./c/` is `a/b/c`.
 */
export function volumePathParts(path: string, field = 'path'): string[] {
  const problem = volumePathProblem(path);
  if (problem !== null) {
    throw new SvcError('bad_request', `the ${field} ${JSON.stringify(path)} ${problem}.`, {
      hint: 'Name a file or folder inside the volume, relative to its root: "data/train.csv"; "" is the root.',
      details: { field },
    });
  }
  return path.split('/').filter((part) => part !== '' && part !== '.');
}

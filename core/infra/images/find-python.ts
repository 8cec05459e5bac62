import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SvcError } from '../../model/errors.js';

const run = promisify(execFile);

/** Minor versions of Python 3 probed as `python3.X` when listing what a machine has. */
const PROBED_MINORS = Array.from({ length: 12 }, (_, i) => i + 6); // 3.6 … 3.17

/**
 * Finds an interpreter for a Python minor version ("3.11"): `pythonX.Y` on
 * PATH first, then the configured default interpreter (SVC_PYTHON) and
 * `python3` if their version matches. When none does, fails with
 * `python_unavailable` listing the versions this machine has.
 */
export async function findPython(version: string, defaultPython: string): Promise<string> {
  for (const candidate of unique([`python${version}`, defaultPython, 'python3'])) {
    if ((await pythonVersionOf(candidate)) === version) return candidate;
  }
  const found = await installedPythonVersions(defaultPython);
  const newest = found[found.length - 1];
  throw new SvcError(
    'python_unavailable',
    `Python ${version} is not installed on this machine (${found.length ? `found ${found.join(', ')}` : 'found no Python 3 interpreter'}).`,
    {
      hint: `Install Python ${version} (as python${version} on PATH), set SVC_PYTHON to an interpreter of that version${newest ? `, or use Image(python_version="${newest}")` : ''}.`,
      details: { requested: version, found },
    },
  );
}

/**
 * The `major.minor` versions this machine can run, oldest first: every
 * `python3.X` on PATH that starts, plus the default interpreter and `python3`.
 */
export function installedPythonVersions(defaultPython: string): Promise<string[]> {
  // Only an error message uses the list, and probing a dozen names (pyenv shims are slow) takes a
  // while: remember it for a minute. findPython itself always looks again.
  const known = listed.get(defaultPython);
  if (known && Date.now() - known.at < LISTING_TTL_MS) return known.versions;
  const versions = (async () => {
    const candidates = unique([defaultPython, 'python3', ...PROBED_MINORS.map((minor) => `python3.${minor}`)]);
    const found = await Promise.all(candidates.map(pythonVersionOf));
    return unique(found.filter((v): v is string => v !== null)).sort(compareVersions);
  })();
  listed.set(defaultPython, { at: Date.now(), versions });
  return versions;
}

const LISTING_TTL_MS = 60_000;
const listed = new Map<string, { at: number; versions: Promise<string[]> }>();

export async function pythonVersionOf(python: string): Promise<string | null> {
  try {
    const { stdout } = await run(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { timeout: 10_000 });
    const version = stdout.trim();
    return /^\d+\.\d+$/.test(version) ? version : null;
  } catch {
    // Not on PATH, or a shim (pyenv) for a version that is not selected.
    return null;
  }
}

function compareVersions(a: string, b: string): number {
  const [aMajor = 0, aMinor = 0] = a.split('.').map(Number);
  const [bMajor = 0, bMinor = 0] = b.split('.').map(Number);
  return aMajor - bMajor || aMinor - bMinor;
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** The error for a Python interpreter that could not be started (`why`: ENOENT, EACCES, or what the spawn said). */
export function pythonNotFound(python: string, why: string, cause?: unknown): SvcError {
  return new SvcError('python_unavailable', `Python was not found: ${JSON.stringify(python)} (${why})`, {
    hint: 'Install Python 3 (3.10 or later), or set SVC_PYTHON to the Python interpreter svc should use.',
    ...(cause === undefined ? {} : { cause }),
  });
}

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SvcError } from '../errors.js';

const run = promisify(execFile);

/**
 * Finds an interpreter for a Python minor version ("3.11"): `pythonX.Y` on
 * PATH first, then the configured default interpreter if its version matches.
 */
export async function findPython(version: string, defaultPython: string): Promise<string> {
  const candidates = [`python${version}`, defaultPython];
  const seen: string[] = [];
  for (const candidate of candidates) {
    const found = await versionOf(candidate);
    if (found === null) continue;
    if (found === version) return candidate;
    seen.push(`${candidate} is ${found}`);
  }
  throw new SvcError('python_unavailable', `Python ${version} is not installed on this machine${seen.length ? ` (${seen.join(', ')})` : ''}.`, {
    hint: `Install Python ${version}, set SVC_PYTHON to an interpreter of that version, or use Image(python_version="${seen.length ? seen[0]!.split(' is ')[1] : '3.11'}").`,
  });
}

async function versionOf(python: string): Promise<string | null> {
  try {
    const { stdout } = await run(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { timeout: 10_000 });
    return stdout.trim();
  } catch {
    return null;
  }
}

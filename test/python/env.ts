/**
 * The tests' own Python: a virtual environment under `.cache/test-python`
 * holding `test/python/requirements.txt`, built once from `python3` (or
 * `SVC_TEST_PYTHON`) and reused until the requirements or the interpreter
 * change. Every test uses it as `SVC_PYTHON`, so nothing depends on what
 * happens to be installed in the machine's own Python.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { moveIntoPlace, relocateVenv, removeAbandonedBuilds, temporaryPath } from '../../core/infra/images/cache-entries.js';
import { chooseInstaller } from '../../core/infra/images/installers.js';
import { packageRoot } from '../../core/model/paths.js';
import { testCacheDir } from '../helpers/config.js';

const root = path.join(packageRoot, '.cache');
const NAME = 'test-python';
export const testPythonDir = path.join(root, NAME);
/** The interpreter every test runs user code and pytest with. */
export const testPython = path.join(testPythonDir, 'bin', 'python');
const requirementsFile = path.join(packageRoot, 'test', 'python', 'requirements.txt');
const MARKER = 'svc-test-python.json';
/** pip, as in most people's environments: svc brings uv with the interpreter's own pip. */
const EXTRA_PACKAGES = ['pip'];

interface Marker {
  readonly requirements: string;
  readonly base: string;
}

/** What the environment must match: the requirements' text and the interpreter it was made from. */
async function wanted(): Promise<Marker & { readonly baseCommand: string }> {
  const baseCommand = process.env.SVC_TEST_PYTHON || 'python3';
  const base = execFileSync(baseCommand, ['-c', 'import sys; print(sys.version.split()[0], sys.base_prefix)'], { encoding: 'utf8' }).trim();
  // With what is installed besides the file (pip): an environment made without it is made again.
  const requirements = createHash('sha256')
    .update(await readFile(requirementsFile))
    .update(EXTRA_PACKAGES.join('\n'))
    .digest('hex');
  return { requirements, base, baseCommand };
}

async function matches(dir: string, want: Marker): Promise<boolean> {
  try {
    const found = JSON.parse(await readFile(path.join(dir, MARKER), 'utf8')) as Marker;
    return found.requirements === want.requirements && found.base === want.base;
  } catch {
    return false;
  }
}

/**
 * Builds the environment when it is missing or out of date (a temporary
 * folder renamed into place, so two test processes at once cannot see it
 * half-built) and returns its interpreter.
 */
export async function ensureTestPython(
  log: (line: string) => void = (line) => process.stderr.write(`test-python | ${line}\n`),
): Promise<string> {
  const want = await wanted();
  if (await matches(testPythonDir, want)) return testPython;
  await mkdir(root, { recursive: true });
  await removeAbandonedBuilds(root);
  log(
    `creating ${path.relative(packageRoot, testPythonDir)} from ${want.baseCommand} (${want.base}) with ${path.relative(packageRoot, requirementsFile)}`,
  );
  // Named with the requirements' hash: the sweeper above recognises (and removes) a dead process's half-built copy.
  const tmp = temporaryPath(root, `${NAME}-${want.requirements.slice(0, 12)}`);
  try {
    // The same installer images use: uv, brought into the tests' cache dir (pip when it cannot be had).
    const installer = await chooseInstaller({ choice: 'auto', cacheDir: testCacheDir, python: want.baseCommand, uvPath: null }, log);
    await installer.createVenv(want.baseCommand, tmp, log);
    await installer.install(
      path.join(tmp, 'bin', 'python'),
      ['-r', requirementsFile, ...EXTRA_PACKAGES],
      log,
      'Check that the installer can reach its index (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf, or UV_* variables).',
      // The tests' Python starts hundreds of times: its bytecode is compiled once, with the install.
      'now',
    );
    await relocateVenv(tmp, testPythonDir);
    await writeFile(path.join(tmp, MARKER), JSON.stringify({ requirements: want.requirements, base: want.base } satisfies Marker));
    // A stale environment (other requirements) is replaced; one another process just built is used.
    await moveIntoPlace(tmp, testPythonDir, (dir) => matches(dir, want));
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw error;
  }
  return testPython;
}

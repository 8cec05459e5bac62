/**
 * Bundles a project by asking the Python SDK: `<python> -m svc.bundle <dir>
 * --out <file>` (the SDK owns the format and `.svcignore`), in its own
 * process group so that it dies with svc.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pythonNotFound } from '../images/find-python.js';
import { SvcError } from '../../model/errors.js';
import { sdkPythonPath } from '../../model/paths.js';
import { spawnGroup } from '../processes/group.js';

export interface CreateBundleOptions {
  /** Default: $SVC_PYTHON, else `python3`. */
  readonly python?: string;
  /** Where to write the tar.gz. Default: `<projectDir>/.svc/bundle.tar.gz`. */
  readonly out?: string;
  /** Largest total size of the bundled files; the SDK's default (100 MiB) when absent. */
  readonly maxBytes?: number;
}

export interface CreatedBundle {
  readonly path: string;
  readonly sha256: string;
  readonly size: number;
  readonly files: number;
  /** What the bundler warned about (links it skipped, special files). */
  readonly warnings: readonly string[];
}

const WARNING = 'svc bundle: warning: ';

export async function createBundle(projectDir: string, options: CreateBundleOptions = {}): Promise<CreatedBundle> {
  const python = options.python ?? process.env.SVC_PYTHON ?? 'python3';
  const root = path.resolve(projectDir);
  // Before spawning: a missing folder must not read as a missing Python.
  const found = await stat(root).catch(() => null);
  if (!found?.isDirectory())
    throw new SvcError('bundle_failed', `cannot bundle ${root}: not a folder`, { hint: 'Bundle the folder that holds your app.' });
  const args = ['-m', 'svc.bundle', root];
  if (options.out !== undefined) args.push('--out', path.resolve(options.out));
  if (options.maxBytes !== undefined) args.push('--max-bytes', String(options.maxBytes));
  const inherited = process.env.PYTHONPATH;
  const stdout: string[] = [];
  const stderr: string[] = [];
  const group = spawnGroup({
    command: python,
    args,
    cwd: root,
    env: {
      ...process.env,
      // The SDK comes first so `import svc` finds this platform's SDK, not an older pip-installed one.
      PYTHONPATH: inherited ? `${sdkPythonPath}${path.delimiter}${inherited}` : sdkPythonPath,
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONIOENCODING: 'utf-8',
    },
    onLine: (stream, line) => (stream === 'stdout' ? stdout : stderr).push(line),
  });
  const killOnExit = () => group.killNow();
  process.on('exit', killOnExit);
  let result: { code: number | null; signal: NodeJS.Signals | null };
  try {
    result = await group.exited;
  } finally {
    process.off('exit', killOnExit);
  }

  return bundleFromRun({ ...result, stdout, stderr }, { root, python, reproduce: `${python} ${args.join(' ')}` });
}

/** How `python -m svc.bundle` ended, from a process or from the warm helper (core/infra/manifest-loader/warm-loader.ts). */
export interface BundleRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: readonly string[];
  readonly stderr: readonly string[];
}

/** The bundle `python -m svc.bundle` wrote, or its failure as an SvcError. */
export function bundleFromRun(
  run: BundleRun,
  context: { readonly root: string; readonly python: string; readonly reproduce: string },
): CreatedBundle {
  const { stdout, stderr } = run;
  const { root, python, reproduce } = context;
  const warnings = stderr.filter((line) => line.startsWith(WARNING)).map((line) => line.slice(WARNING.length));
  const problem = stderr
    .filter((line) => !line.startsWith(WARNING))
    .join('\n')
    .replace(/^svc bundle: /, '')
    .trim();
  if (run.code === 0) return parseResult(stdout, warnings, reproduce);
  if (run.code === null && run.signal === null) {
    throw pythonNotFound(python, problem);
  }
  if (run.code === 3) {
    throw new SvcError('bundle_too_large', `cannot bundle ${root}: ${problem}`, { details: { rule: 'project_too_large' } });
  }
  const how = run.signal ? `was stopped by ${run.signal}` : `exited with code ${run.code}`;
  throw new SvcError('bundle_failed', `cannot bundle ${root}: ${problem || `Python ${how}`}`, { hint: `To reproduce: ${reproduce}` });
}

function parseResult(stdout: readonly string[], warnings: readonly string[], reproduce: string): CreatedBundle {
  const line = stdout.filter((text) => text.trim() !== '').at(-1) ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    parsed = null;
  }
  const value = parsed as Partial<Record<keyof CreatedBundle, unknown>> | null;
  if (
    value === null ||
    typeof value !== 'object' ||
    typeof value.path !== 'string' ||
    typeof value.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(value.sha256) ||
    typeof value.size !== 'number' ||
    typeof value.files !== 'number'
  ) {
    throw new SvcError('internal', `svc.bundle printed ${JSON.stringify(line)} instead of its JSON line (to reproduce: ${reproduce})`);
  }
  return { path: value.path, sha256: value.sha256, size: value.size, files: value.files, warnings };
}

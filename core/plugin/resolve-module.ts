/**
 * Finds the file a plugin spec names: a path (relative to the project) or an
 * npm package installed in the project, not next to svc.
 */
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Conditions an ESM host matches in a package's "exports" (Node's order of preference is the object's key order). */
const importConditions = new Set(['import', 'node', 'default']);

/** True when `spec` is a path rather than a package name (package names never start with "."). */
export function isPathSpec(spec: string): boolean {
  return spec.startsWith('.') || path.isAbsolute(spec) || spec.startsWith('file:');
}

/** A `file:` URL to import, or null when nothing is found. */
export async function resolveModule(spec: string, cwd: string): Promise<string | null> {
  if (isPathSpec(spec)) {
    const file = spec.startsWith('file:') ? new URL(spec) : pathToFileURL(path.resolve(cwd, spec));
    return (await exists(file)) ? file.href : null;
  }
  // Resolve from the project, as `node` run in cwd would; the file need not exist.
  const require = createRequire(path.join(cwd, 'package.json'));
  try {
    return pathToFileURL(require.resolve(spec)).href;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND') return null;
    if (code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw error;
  }
  // An ESM-only package ("exports" with "import" but no "require") that require.resolve cannot see.
  const file = await resolveImportExport(spec, require.resolve.paths(spec) ?? []);
  return file === null ? null : pathToFileURL(file).href;
}

async function resolveImportExport(spec: string, searchDirs: readonly string[]): Promise<string | null> {
  const parts = spec.split('/');
  const nameLength = spec.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameLength).join('/');
  const subpath = ['.', ...parts.slice(nameLength)].join('/');
  for (const dir of searchDirs) {
    const root = path.join(dir, name);
    let manifest: { exports?: unknown };
    try {
      manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { exports?: unknown };
    } catch {
      continue;
    }
    const target = pickCondition(exportEntry(manifest.exports, subpath));
    return target === null ? null : path.join(root, target);
  }
  return null;
}

function exportEntry(exportsField: unknown, subpath: string): unknown {
  const keyed = isRecord(exportsField) && Object.keys(exportsField).some((key) => key.startsWith('.'));
  if (keyed) return exportsField[subpath];
  return subpath === '.' ? exportsField : undefined; // "exports": "./x.js" or a conditions object means ".".
}

function pickCondition(entry: unknown): string | null {
  if (typeof entry === 'string') return entry;
  const candidates = Array.isArray(entry)
    ? entry
    : isRecord(entry)
      ? Object.entries(entry).filter(([condition]) => importConditions.has(condition)).map(([, value]) => value)
      : [];
  for (const candidate of candidates) {
    const target = pickCondition(candidate);
    if (target !== null) return target;
  }
  return null;
}

async function exists(file: URL): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

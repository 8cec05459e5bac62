/**
 * Finds the file a plugin spec names: a path (relative to the project) or an
 * npm package installed in the project, not next to svc. `import-meta-resolve`
 * resolves it as `import()` run from the project would: package.json
 * "exports" (subpath patterns such as "./*" included) and "main".
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { moduleResolve } from 'import-meta-resolve';

/** Resolution failures that mean "there is no such module"; any other is a broken package or spec. */
const NOT_FOUND = new Set(['ERR_MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);

/** True when `spec` is a path rather than a package name (package names never start with "."). */
export function isPathSpec(spec: string): boolean {
  return spec.startsWith('.') || path.isAbsolute(spec) || spec.startsWith('file:');
}

/** A `file:` URL to import, or null when nothing is found; other resolution errors are thrown. */
export function resolveModule(spec: string, cwd: string): string | null {
  // An absolute path is a path, not a URL: `moduleResolve` would read a Windows drive letter as a scheme.
  const specifier = path.isAbsolute(spec) ? pathToFileURL(spec).href : spec;
  try {
    return moduleResolve(specifier, pathToFileURL(path.join(cwd, 'package.json'))).href;
  } catch (error) {
    if (NOT_FOUND.has((error as { code?: string }).code ?? '')) return null;
    throw error;
  }
}

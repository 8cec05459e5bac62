/**
 * Where svc's own files live, found from this module's location so that the
 * paths hold both for `dist/` builds and for an installed package.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The package root: the folder holding package.json, found from this module's place (dist/core/model/paths.js). */
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Folder to put on PYTHONPATH so that `import svc` finds the SDK without a pip install. */
export const sdkPythonPath = path.join(packageRoot, 'sdk', 'python');

/** The runtime's third-party requirements, one pip requirement per line (shared with the SDK). */
export const runtimeRequirementsFile = path.join(sdkPythonPath, 'svc', 'runtime', 'requirements.txt');

/** Example projects shipped with svc. */
export const examplesRoot = path.join(packageRoot, 'examples');

/** svc's own version, from package.json (image labels, the svc job's tag, `Meta.svc_version`). */
export const svcVersion: string = (JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

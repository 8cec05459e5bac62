/**
 * `npm run build` runs this: svc's version is written once, in package.json,
 * and the Python SDK (installed on its own with pip, so it cannot read
 * package.json) gets it as `sdk/python/svc/_version.py`. The file is
 * rewritten only when the version changed.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sdkPythonPath, svcVersion } from '../core/model/paths.js';

const file = path.join(sdkPythonPath, 'svc', '_version.py');
const text = `# Written by \`npm run build\` from package.json, where svc's version lives: change it there.\n__version__ = ${JSON.stringify(svcVersion)}\n`;
const current = (() => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
})();
if (current !== text) writeFileSync(file, text);

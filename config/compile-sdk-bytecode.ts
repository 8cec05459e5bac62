/**
 * `npm run build` runs this after write-sdk-version: compiles the Python
 * SDK's bytecode next to its sources (`python3 -m compileall`, or
 * $SVC_PYTHON's). svc starts Python with PYTHONDONTWRITEBYTECODE, so that no
 * `__pycache__` appears in a user's project; without these files each
 * manifest, bundle and container start compiled svc's own modules from
 * source again (~25 ms of CPU each). Python uses them only while they match
 * their source and its version, and falls back to the source otherwise;
 * without that Python this does nothing.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { sdkPythonPath } from '../core/model/paths.js';

const python = process.env.SVC_PYTHON ?? 'python3';
const result = spawnSync(python, ['-m', 'compileall', '-q', path.join(sdkPythonPath, 'svc')], {
  stdio: ['ignore', 'ignore', 'pipe'],
  encoding: 'utf8',
});
if (result.error === undefined && result.status !== 0) {
  // Not fatal: svc runs from the sources as it did.
  process.stderr.write(
    `svc build: could not compile the Python SDK's bytecode with ${python} (${result.stderr.trim() || `exit ${result.status}`}); it is compiled on each start instead\n`,
  );
}

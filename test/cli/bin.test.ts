import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { packageRoot, sdkPythonPath } from '../../core/model/paths.js';

/** `npx svc` runs the package's bin file directly: after every build it must still be executable. */
describe('the svc bin', () => {
  const pkg = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { bin: { svc: string }; version: string };
  const bin = path.join(packageRoot, pkg.bin.svc);

  it('is executable and starts with a node shebang', () => {
    assert.notEqual(statSync(bin).mode & 0o111, 0, `${bin} is not executable: the build must chmod it`);
    assert.match(readFileSync(bin, 'utf8').split('\n')[0]!, /^#!\/usr\/bin\/env node/);
  });

  it('runs as a program', () => {
    assert.match(execFileSync(bin, ['--version'], { encoding: 'utf8' }), /\d+\.\d+\.\d+/);
  });

  it('tells the same version as the Python SDK, both from package.json', () => {
    const cli = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
    const sdk = execFileSync(process.env.SVC_PYTHON ?? 'python3', ['-c', 'import svc; print(svc.__version__)'], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: sdkPythonPath },
    }).trim();
    assert.equal(cli, `svc, ${pkg.version}`);
    assert.equal(sdk, pkg.version);
  });
});

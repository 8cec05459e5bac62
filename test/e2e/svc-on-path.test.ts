/**
 * What the README's set-up promises a newcomer: after `npm install` in the
 * clone, `npm install -g .` puts `svc` on PATH, and it runs from any other
 * folder. Installed under a temporary prefix, not into the machine's own.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import { tempDir } from '../helpers/config.js';

const run = promisify(execFile);

describe("npm install -g . (the README's way to get svc on PATH)", function () {
  this.timeout(120_000);

  it("links a bin that runs from another folder and tells the package's version", async () => {
    const prefix = tempDir('svc-global-');
    const elsewhere = tempDir('svc-elsewhere-');
    // --ignore-scripts: `prepare` would rebuild dist/ under the tests running from it.
    await run('npm', ['install', '-g', '--prefix', prefix, '--offline', '--ignore-scripts', '--no-audit', '--no-fund', packageRoot], {
      cwd: elsewhere,
    });
    const bin = path.join(prefix, 'bin', 'svc');
    assert.equal(
      realpathSync(bin),
      realpathSync(path.join(packageRoot, 'dist', 'cli', 'index.js')),
      'a link into the clone: a rebuild needs no reinstall',
    );
    const { version } = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await run(bin, ['--version'], { cwd: elsewhere });
    assert.equal(stdout.trim(), `svc, ${version}`);
    const help = await run(bin, ['serve', '--help'], { cwd: elsewhere });
    assert.match(help.stdout, /\$ svc serve/);
  });
});

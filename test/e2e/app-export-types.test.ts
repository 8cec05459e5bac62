/**
 * The typed clients type-check: the exports of the example apps (endpoints
 * returning dataclasses and dicts, a function, an ASGI app, a realtime
 * handler with a union of message types) pass `mypy --strict`, SDK included,
 * as a user's CI would run it on a project that checks its client in.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import appExport from '../../cli/commands/app-export.js';
import { loadManifest } from '../../core/manifest/load.js';
import { examplesRoot, sdkPythonPath } from '../../core/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform.js';
import { capture } from '../cli/fixture.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { CLIENT_MYPY_CONFIG, runPython } from '../plugins/export-python/python-helpers.js';

const EXAMPLES = ['quickstart', 'asgi-fastapi', 'realtime-chat'];

describe('exported clients pass mypy --strict', function () {
  this.timeout(300_000);
  let platform: Platform;
  const out = tempDir('svc-export-types-');

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: () => {} });
    for (const name of EXAMPLES) {
      const manifest = await loadManifest({ target: path.join(examplesRoot, name, 'app.py') });
      await platform.deployments.deploy({ spec: manifest.spec, source: { root: manifest.root, entry: manifest.spec.entry }, workspace: DEFAULT_WORKSPACE, stage: 'deployed', principal: null });
      await appExport(capture({ env: { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret }, cwd: out }).context, manifest.spec.name, { out });
    }
  });
  after(async () => platform?.close());

  it(`finds nothing in the clients of ${EXAMPLES.join(', ')}, nor in the SDK they import`, async () => {
    writeFileSync(path.join(out, 'mypy.ini'), CLIENT_MYPY_CONFIG);
    const checked = await runPython('import sys\nfrom mypy import api\nout, err, code = api.run(["--config-file", "mypy.ini", "--cache-dir", ".mypy_cache", "-p", "svc_clients"])\nprint(out, err)\nsys.exit(code)', {
      cwd: out, env: { MYPYPATH: sdkPythonPath },
    });
    assert.equal(checked.code, 0, `${checked.stdout}\n${checked.stderr}`);
    assert.match(checked.stdout, /Success: no issues found in \d+ source files/);
  });
});

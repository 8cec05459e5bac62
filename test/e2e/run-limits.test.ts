import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';

const project = path.join(packageRoot, 'sdk', 'python', 'tests', 'fixtures', 'class_project');

/**
 * The operator's bounds on remote runs, set in the config: sets of parameters one class runs at once
 * (`classParameterSets`), and runs one workspace holds (`maxRunsPerWorkspace`). Each refusal is
 * `too_many_runs` naming the bound, and starts nothing; a set already running is reused, not counted again.
 */
describe("remote runs within the operator's bounds", function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let sha = '';
  const run = (parameters: Record<string, unknown>, fn = 'counter') =>
    call('POST', '/api/v1/runs', { token: owner, json: { manifest: manifest.raw, bundle: sha, function: fn, parameters } });

  before(async () => {
    platform = await startPlatform({ config: testConfig({ classParameterSets: 2, maxRunsPerWorkspace: 3 }) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    manifest = await loadManifest({ target: path.join(project, 'class_app.py') });
    const bundle = await bundleOfFolder(project);
    sha = bundle.sha256;
    assert.equal((await upload(platform.url, owner, bundle.bytes, sha)).status, 201);
  });
  after(() => platform?.close());

  it('runs at most classParameterSets sets of one class at once, and says so for the next', async () => {
    assert.equal((await run({ label: 'a' })).status, 201);
    assert.equal((await run({ label: 'b' })).status, 201);
    const third = await run({ label: 'c' });
    assert.equal(third.status, 429, third.text);
    assert.equal(third.json.error.code, 'too_many_runs');
    assert.equal(
      third.json.error.message,
      'the class counter of class-test already runs 2 sets of parameters in the workspace default, the most one class may run at once.',
    );
    assert.deepEqual(third.json.error.details, { sets: 2, limit: 2 });
    assert.match(third.json.error.hint, /classParameterSets/);
    assert.equal((await run({ label: 'a' })).status, 201, 'a set already running is no new one');
    const runs = (await call('GET', '/api/v1/runs', { token: owner })).json.runs as { parameters?: { label: string } }[];
    assert.deepEqual(runs.map((r) => r.parameters?.label).sort(), ['a', 'a', 'b'], 'the refused set started nothing');
  });

  it('holds at most maxRunsPerWorkspace runs in a workspace', async () => {
    const fourth = await run({ label: 'b' });
    assert.equal(fourth.status, 429, fourth.text);
    assert.equal(fourth.json.error.message, 'the workspace default already holds 3 remote runs, the most it may hold at once.');
    assert.match(fourth.json.error.hint, /maxRunsPerWorkspace/);
  });
});

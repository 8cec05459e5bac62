import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Answer, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';

const folder = path.join(packageRoot, 'test', 'fixtures', 'secrets');

/** Every file below `dir`, read whole (state files, logs, bundles, the key file). */
function filesBelow(dir: string): { file: string; bytes: Buffer }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesBelow(file);
    return entry.isFile() ? [{ file, bytes: readFileSync(file) }] : [];
  });
}

/**
 * Secrets end to end on the embedded platform, with real workers: a named
 * secret and an inline one (`svc.Secret.from_dict`) reach the endpoint's
 * environment, while their values (unique markers) appear nowhere else —
 * not in the data dir (state files, logs, bundles), not in any API answer.
 * A deploy naming a secret the workspace lacks is refused before anything
 * changes; another workspace cannot name them; `restart` brings new values.
 */
describe('secrets on the embedded platform', function () {
  this.timeout(300_000);
  const named = `named-${randomBytes(12).toString('hex')}`;
  const inline = `inline-${randomBytes(12).toString('hex')}`;
  const changed = `changed-${randomBytes(12).toString('hex')}`;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let sha = '';
  let url = '';
  /** Every API answer of the test, to search for values at the end. */
  const answers: Answer[] = [];
  const api = async (method: string, urlPath: string, options: { token?: string; json?: unknown } = {}) => {
    const answer = await call(method, urlPath, {
      token: options.token ?? owner,
      ...(options.json === undefined ? {} : { json: options.json }),
    });
    answers.push(answer);
    return answer;
  };
  const deployBody = () => ({ manifest: manifest.raw, bundle: sha, inlineSecrets: manifest.inlineSecrets });

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    process.env.VAULT_INLINE = inline;
    try {
      manifest = await loadManifest({ target: path.join(folder, 'app.py') });
    } finally {
      delete process.env.VAULT_INLINE;
    }
    const bundle = await bundleOfFolder(folder);
    sha = bundle.sha256;
    assert.equal((await upload(platform.url, owner, bundle.bytes, sha)).status, 201);
  });

  after(async () => {
    await platform?.close();
  });

  it('keeps from_dict values out of the manifest: the loader moves them beside it', () => {
    assert.deepEqual(manifest.inlineSecrets, [{ INLINE_TOKEN: inline }]);
    assert.ok(!JSON.stringify(manifest.raw).includes(inline), 'the manifest holds no inline value');
    assert.deepEqual(manifest.raw.workloads[0]!.secrets, ['db', '@0']);
  });

  it('refuses a deploy naming a secret the workspace lacks, naming it, before anything changes', async () => {
    const refused = await api('POST', '/api/v1/apps/vault/deployments', { json: deployBody() });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.json.error.code, 'secret_not_found');
    assert.match(refused.json.error.message, /"db"/);
    assert.equal((await api('GET', '/api/v1/apps/vault')).status, 404, 'no app was made');
  });

  it('creates the secret and answers with its keys only', async () => {
    const created = await api('POST', '/api/v1/secrets', { json: { name: 'db', values: { DATABASE_URL: named, POOL: '5' } } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.keys, ['DATABASE_URL', 'POOL']);
    const again = await api('POST', '/api/v1/secrets', { json: { name: 'db', values: { A: 'b' } } });
    assert.equal(again.status, 409);
    const listed = await api('GET', '/api/v1/secrets');
    assert.deepEqual(
      listed.json.secrets.map((s: { name: string }) => s.name),
      ['db'],
    );
  });

  it('refuses keys that are no environment variable names, naming the key and not the value', async () => {
    const bad = await api('POST', '/api/v1/secrets', { json: { name: 'bad', values: { 'NOT-A-NAME': named } } });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /NOT-A-NAME/);
    const reserved = await api('POST', '/api/v1/secrets', { json: { name: 'bad', values: { SVC_APP: 'x' } } });
    assert.equal(reserved.status, 400);
    const badName = await api('POST', '/api/v1/secrets', { json: { name: 'Bad_Name', values: { A: 'x' } } });
    assert.equal(badName.status, 422);
    assert.equal(badName.json.error.code, 'name_invalid');
    const setAndRemoved = await api('PATCH', '/api/v1/secrets/db', { json: { values: { POOL: '6' }, remove: ['POOL'] } });
    assert.equal(setAndRemoved.status, 400, setAndRemoved.text);
    assert.match(setAndRemoved.json.error.message, /POOL is both set and removed/);
    assert.deepEqual(
      (await api('GET', '/api/v1/secrets')).json.secrets[0].keys,
      ['DATABASE_URL', 'POOL'],
      'a refused change keeps every key',
    );
  });

  it('deploys: the worker reads both secrets from its environment', async () => {
    const deployed = await api('POST', '/api/v1/apps/vault/deployments', { json: deployBody() });
    assert.equal(deployed.status, 201, deployed.text);
    url = deployed.json.deployments[0].urls.path;
    const answer = await fetch(url);
    assert.deepEqual(await answer.json(), { DATABASE_URL: named, INLINE_TOKEN: inline });
  });

  it('another workspace cannot name them: its deploy is secret_not_found, its list empty, the secret not found', async () => {
    assert.equal((await api('POST', '/api/v1/workspaces', { json: { name: 'acme' } })).status, 201);
    const token = (await api('POST', '/api/v1/workspaces/acme/token', { json: {} })).json.secret as string;
    assert.equal((await upload(platform.url, token, (await bundleOfFolder(folder)).bytes, sha)).status, 201);
    const refused = await api('POST', '/api/v1/apps/vault/deployments', { token, json: deployBody() });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.json.error.code, 'secret_not_found');
    assert.deepEqual((await api('GET', '/api/v1/secrets', { token })).json.secrets, []);
    const patch = await api('PATCH', '/api/v1/secrets/db', { token, json: { values: { DATABASE_URL: 'stolen' } } });
    assert.equal(patch.status, 404);
    assert.equal(patch.json.error.code, 'secret_not_found');
    assert.equal((await api('DELETE', '/api/v1/secrets/db', { token })).status, 404);
  });

  it('a changed secret reaches running workers at once with restart', async () => {
    const kept = await api('PATCH', '/api/v1/secrets/db', { json: { values: { DATABASE_URL: changed } } });
    assert.equal(kept.status, 200, kept.text);
    assert.deepEqual(kept.json.restarted, []);
    assert.equal(
      ((await (await fetch(url)).json()) as { DATABASE_URL: string }).DATABASE_URL,
      named,
      'without restart the worker keeps its value',
    );
    const restarted = await api('PATCH', '/api/v1/secrets/db', { json: { values: { DATABASE_URL: changed }, restart: true } });
    assert.deepEqual(restarted.json.restarted, ['vault/env']);
    assert.deepEqual(await (await fetch(url)).json(), { DATABASE_URL: changed, INLINE_TOKEN: inline });
  });

  it('shows no value in any API answer, nor anywhere in the data dir; the key file is beside the state, 0600', async () => {
    await api('GET', '/api/v1/apps/vault');
    await api('GET', '/api/v1/apps/vault/interface');
    await api('GET', '/api/v1/deployments');
    await api('GET', '/api/v1/apps/vault/deployments/env/logs');
    await api('GET', '/api/v1/secrets');
    const logs = answers.at(-2)!;
    assert.match(logs.text, /serving env/, "the logs were read (the control: they hold the worker's line)");
    for (const answer of answers) {
      for (const marker of [named, inline, changed])
        assert.ok(!answer.text.includes(marker), `an API answer holds a value: ${answer.text.slice(0, 200)}`);
    }
    const dataDir = platform.config.dataDir;
    const files = filesBelow(dataDir);
    assert.ok(
      files.some((f) => f.file.includes(`${path.sep}bundles${path.sep}`)) &&
        files.some((f) => f.file.includes(`${path.sep}logs${path.sep}`)),
      'bundles and logs were searched',
    );
    for (const { file, bytes } of files) {
      for (const marker of [named, inline, changed]) assert.equal(bytes.indexOf(marker), -1, `${file} holds a secret value`);
    }
    const keyFile = path.join(dataDir, 'secrets.key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  });
});

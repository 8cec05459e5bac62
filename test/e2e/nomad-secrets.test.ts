/**
 * Secrets on Nomad, against the in-repo stand-ins: a deploy writes the
 * workload's values into the Nomad Variable `nomad/jobs/<job id>`, the job
 * carries only the template that renders it (`Envvars`), the raw_exec task's
 * worker reads them from its environment; the job spec, the API and Consul KV
 * hold no value; deleting the app deletes the Variable; `restart` starts a
 * new job with the new value.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { until } from '../helpers/until.js';
import { nomadJson, startStandins, svcJobs, uploadProject, type Standins } from './cluster-helpers.js';

const folder = path.join(packageRoot, 'test', 'fixtures', 'secrets');

describe('secrets on Nomad (stand-ins): a Nomad Variable and a template', function () {
  this.timeout(180_000);
  let standins: Standins;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let url = '';
  let jobId = '';
  const named = `named-${randomBytes(10).toString('hex')}`;
  const inline = `inline "quoted" # ${randomBytes(10).toString('hex')}\nsecond line`;
  const changed = `changed-${randomBytes(10).toString('hex')}`;

  before(async () => {
    standins = await startStandins();
    platform = await startPlatform({ config: standins.config(), autoscale: { tickMs: 200 } });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    await until('this replica leads', () => platform.role === 'ready');
  });
  after(async () => {
    await platform?.close();
    await standins?.close();
  });

  it('deploys: the worker reads the secrets, the job spec holds only the template', async () => {
    assert.equal(
      (await call('POST', '/api/v1/secrets', { token: owner, json: { name: 'db', values: { DATABASE_URL: named } } })).status,
      201,
    );
    process.env.VAULT_INLINE = inline;
    const manifest = await loadManifest({ target: path.join(folder, 'app.py') }).finally(() => delete process.env.VAULT_INLINE);
    const body = await uploadProject(platform, folder);
    const deployed = await call('POST', '/api/v1/apps/vault/deployments', {
      token: owner,
      json: { ...body, inlineSecrets: manifest.inlineSecrets },
    });
    assert.equal(deployed.status, 201, deployed.text);
    url = deployed.json.deployments[0].urls.path;
    assert.deepEqual(await (await fetch(url)).json(), { DATABASE_URL: named, INLINE_TOKEN: inline });

    jobId = (await svcJobs(standins.nomad))[0]!.ID;
    const job = (await nomadJson(standins.nomad, `/v1/job/${jobId}`)).json;
    const text = JSON.stringify(job);
    for (const value of [named, inline, JSON.stringify(inline)]) assert.ok(!text.includes(value), 'the job spec holds no value');
    const [template] = job.TaskGroups[0].Tasks[0].Templates;
    assert.equal(
      template.EmbeddedTmpl,
      `{{ with nomadVar "nomad/jobs/${jobId}" }}{{ range .Tuples }}{{ .K }}={{ .V | toJSON }}\n{{ end }}{{ end }}`,
    );
    assert.deepEqual([template.DestPath, template.Envvars, template.ChangeMode], ['secrets/svc-secrets.env', true, 'noop']);
    const variable = await nomadJson(standins.nomad, `/v1/var/nomad/jobs/${jobId}`);
    assert.deepEqual(variable.json.Items, { DATABASE_URL: named, INLINE_TOKEN: inline });
  });

  it('keeps values out of Consul KV and the API', async () => {
    const kv = await (await fetch(`${standins.consul.url}/v1/kv/?recurse=true`)).text();
    const decoded = JSON.parse(kv)
      .map((entry: { Value: string | null }) => Buffer.from(entry.Value ?? '', 'base64').toString())
      .join('\n');
    assert.match(decoded, /"sealed"/, 'the secret records are there (the control)');
    for (const value of [named, inline]) assert.ok(!decoded.includes(value), 'no value in Consul KV');
    for (const p of ['/api/v1/apps/vault', '/api/v1/apps/vault/interface', '/api/v1/secrets']) {
      const answer = await call('GET', p, { token: owner });
      assert.ok(!answer.text.includes(named) && !answer.text.includes('inline "quoted"'), p);
    }
  });

  it("restart starts a new job with the new value and deletes the old job's Variable", async () => {
    const restarted = await call('PATCH', '/api/v1/secrets/db', {
      token: owner,
      json: { values: { DATABASE_URL: changed }, restart: true },
    });
    assert.deepEqual(restarted.json.restarted, ['vault/env']);
    assert.equal(((await (await fetch(url)).json()) as { DATABASE_URL: string }).DATABASE_URL, changed);
    assert.equal((await nomadJson(standins.nomad, `/v1/var/nomad/jobs/${jobId}`)).status, 404, "the old job's Variable is gone");
  });

  it('deleting the app deletes its Variables', async () => {
    const [current] = (await svcJobs(standins.nomad)).map((job) => job.ID);
    assert.equal((await nomadJson(standins.nomad, `/v1/var/nomad/jobs/${current}`)).status, 200);
    assert.equal((await call('DELETE', '/api/v1/apps/vault', { token: owner })).status, 204);
    assert.equal((await nomadJson(standins.nomad, `/v1/var/nomad/jobs/${current}`)).status, 404);
  });
});

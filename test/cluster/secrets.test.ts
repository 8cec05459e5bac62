/**
 * Secrets on real Nomad (opt-in: `npm run test:cluster`): `svc secret create`
 * and a deploy through the CLI; the exec task's worker reads both secrets —
 * a named one and a `from_dict` value with quotes, `#` and a newline — from
 * `os.environ`, rendered by Nomad from the Variable `nomad/jobs/<job id>` that
 * svc wrote with its least-privilege token (config/policies/svc-nomad.hcl);
 * the job spec (GET /v1/job/:id) holds no value; deleting the app deletes the
 * Variable.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { NAMESPACE } from './agents.js';
import { useCluster } from './suite.js';
import { SvcServer, svcCli } from './svc-process.js';

const app = path.join(packageRoot, 'test', 'fixtures', 'secrets', 'app.py');

describe('svc on real Nomad and Consul: secrets', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;
  let url = '';
  let jobId = '';
  const named = `named-${randomBytes(10).toString('hex')}`;
  const inline = `inline "quoted" # ${randomBytes(6).toString('hex')}\nsecond line`;

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
  });
  after(async () => {
    await server?.stop();
  });

  it('deploys an endpoint whose worker reads the secrets from os.environ, through a Nomad Variable and a template', async () => {
    const c = await cluster();
    const created = await svcCli(server, ['secret', 'create', 'db', `DATABASE_URL=${named}`]);
    assert.equal(created.code, 0, created.stderr);
    assert.ok(!`${created.stdout}${created.stderr}`.includes(named), 'the CLI never prints a value');
    process.env.VAULT_INLINE = inline;
    const ran = await svcCli(server, ['deploy', app, '--json']).finally(() => delete process.env.VAULT_INLINE);
    assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}\n${server.output.slice(-3000)}`);
    url = (JSON.parse(ran.stdout) as { workloads: { url: string }[] }).workloads[0]!.url;
    const answer = await fetch(url);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.deepEqual(await answer.json(), { DATABASE_URL: named, INLINE_TOKEN: inline });

    const jobs = (await c.nomadGet(`/v1/jobs?namespace=${NAMESPACE}&meta=true`)) as { ID: string; Meta: Record<string, string> }[];
    jobId = jobs.find((j) => j.Meta?.svc_app === 'vault')!.ID;
    const job = await c.nomadGet(`/v1/job/${jobId}?namespace=${NAMESPACE}`);
    const text = JSON.stringify(job);
    for (const value of [named, inline, JSON.stringify(inline).slice(1, -1)])
      assert.ok(!text.includes(value), 'the job spec holds no value');
    const [template] = job.TaskGroups[0].Tasks[0].Templates;
    assert.equal(template.Envvars, true);
    assert.match(template.EmbeddedTmpl, new RegExp(`nomadVar "nomad/jobs/${jobId}"`));
    const variable = await c.nomadGet(`/v1/var/nomad/jobs/${jobId}?namespace=${NAMESPACE}`);
    assert.deepEqual(Object.keys(variable.Items).sort(), ['DATABASE_URL', 'INLINE_TOKEN']);
    assert.ok(!server.output.includes(named) && !server.output.includes('inline "quoted"'), "svc's own output holds no value");
  });

  it('deleting the app deletes the Variable', async () => {
    const c = await cluster();
    const deleted = await svcCli(server, ['app', 'delete', 'vault', '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
    await assert.rejects(c.nomadGet(`/v1/var/nomad/jobs/${jobId}?namespace=${NAMESPACE}`), /404/);
  });
});

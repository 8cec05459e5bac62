/**
 * Consul KV trees written by earlier releases (test/fixtures/upgrade/make-consul-kv.ts: a real
 * `svc server` with `state: consul`) imported into a new Consul (`consul kv import`) and opened by
 * this svc (opt-in: `npm run test:cluster`): the workspace, the secret and the token are there and
 * work, and the data format is the one this svc writes.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import { DATA_FORMAT } from '../../core/services/data-format/data-format.js';
import { findBinary } from './agents.js';
import { useCluster } from './suite.js';
import { SvcServer } from './svc-process.js';

const run = promisify(execFile);
const FIXTURES = path.join(packageRoot, 'test', 'fixtures', 'upgrade');

describe('svc on real Consul: KV trees of earlier releases', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);

  for (const fixture of readdirSync(FIXTURES).filter((name) => /^consul-kv-[\d.]+\.json$/.test(name))) {
    const expected = JSON.parse(readFileSync(path.join(FIXTURES, fixture.replace(/\.json$/, '.expected.json')), 'utf8')) as {
      svcVersion: string;
      ciToken: string;
      workspace: string;
      secret: string;
    };

    it(`opens the tree svc ${expected.svcVersion} wrote (${fixture}): its workspace, secret and token work`, async () => {
      const c = await cluster();
      const consul = findBinary('CONSUL_BIN', 'consul')!;
      const asOperator = { ...process.env, CONSUL_HTTP_ADDR: c.consul.address, CONSUL_HTTP_TOKEN: c.consul.rootToken };
      await run(consul, ['kv', 'delete', '-recurse', 'svc/'], { env: asOperator });
      await run(consul, ['kv', 'import', `@${path.join(FIXTURES, fixture)}`], { env: asOperator });

      const server = await SvcServer.serving(c.svcEnv());
      const ask = (route: string) => fetch(`${server.url}/api/v1${route}`, { headers: { Authorization: `Bearer ${expected.ciToken}` } });
      assert.equal((await ask('/whoami')).status, 200, 'the token works');
      const secrets = (await (await ask('/secrets')).json()) as { secrets: { name: string }[] };
      assert.ok(
        secrets.secrets.some((s) => s.name === expected.secret),
        JSON.stringify(secrets),
      );
      const workspaces = (await (await ask('/workspaces')).json()) as { workspaces: { name: string }[] };
      assert.ok(
        workspaces.workspaces.some((w) => w.name === expected.workspace),
        JSON.stringify(workspaces),
      );
      const format = await c.consulGet('/v1/kv/svc/bootstrap/data-format?raw');
      assert.equal(format.format, DATA_FORMAT);
      await server.stop();
    });
  }
});

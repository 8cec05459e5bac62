/**
 * svc's state in Consul KV through `consul snapshot save` and `consul snapshot restore` (opt-in:
 * `npm run test:cluster`), as docs/operators.md ("Backup and restore") tells operators: a real
 * `svc server` (state: consul) gets a secret, a token and a workspace through the CLI and the API,
 * stops; the snapshot is saved, svc's keys are deleted, the snapshot restored; a new `svc server`
 * on the same Consul serves them all again (the secret opens, the token works, the data format is
 * the one this svc writes). `svc server backup` refuses this configuration, naming the snapshot.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import { DATA_FORMAT } from '../../core/services/data-format/data-format.js';
import { tempDir } from '../helpers/config.js';
import { findBinary } from './agents.js';
import { useCluster } from './suite.js';
import { SvcServer, svcCli } from './svc-process.js';

const run = promisify(execFile);

describe('svc on real Consul: state through consul snapshot save and restore', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);

  it("brings svc's workspace, secret and token back from a Consul snapshot", async () => {
    const c = await cluster();
    const consul = findBinary('CONSUL_BIN', 'consul')!;
    const asOperator = { ...process.env, CONSUL_HTTP_ADDR: c.consul.address, CONSUL_HTTP_TOKEN: c.consul.rootToken };
    const first = await SvcServer.serving(c.svcEnv());
    assert.equal((await svcCli(first, ['secret', 'create', 'db', 'DATABASE_URL=postgres://kept'])).code, 0);
    assert.equal((await svcCli(first, ['workspace', 'create', 'kept'])).code, 0);
    const made = await fetch(`${first.url}/api/v1/tokens`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${first.ownerToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'ci' }),
    });
    const { secret: ciToken } = (await made.json()) as { secret: string };
    // `svc server backup` with the server's own configuration (state: consul) says what to use instead.
    const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
    await assert.rejects(
      run(process.execPath, [cli, 'server', 'backup', path.join(tempDir('svc-snap-'), 'x.tar.gz')], { env: c.svcEnv({ NO_COLOR: '1' }) }),
      (error: { stderr: string }) => /works on the embedded store; this configuration keeps svc's state in Consul KV/.test(error.stderr),
    );
    await first.stop();

    const snapshot = path.join(tempDir('svc-snap-'), 'consul.snap');
    await run(consul, ['snapshot', 'save', snapshot], { env: asOperator });
    await run(consul, ['kv', 'delete', '-recurse', 'svc/'], { env: asOperator });
    assert.deepEqual(await c.consulGet('/v1/kv/svc/?keys').catch(() => []), [], "svc's keys are gone");
    await run(consul, ['snapshot', 'restore', snapshot], { env: asOperator });

    const second = await SvcServer.serving(c.svcEnv());
    const ask = (route: string) => fetch(`${second.url}/api/v1${route}`, { headers: { Authorization: `Bearer ${ciToken}` } });
    assert.equal((await ask('/whoami')).status, 200, 'the token made before the snapshot works');
    const secrets = (await (await ask('/secrets')).json()) as { secrets: { name: string }[] };
    assert.deepEqual(
      secrets.secrets.map((s) => s.name),
      ['db'],
    );
    const workspaces = (await (await ask('/workspaces')).json()) as { workspaces: { name: string }[] };
    assert.ok(
      workspaces.workspaces.some((w) => w.name === 'kept'),
      JSON.stringify(workspaces),
    );
    const format = await c.consulGet('/v1/kv/svc/bootstrap/data-format?raw');
    assert.equal(format.format, DATA_FORMAT);
    await second.stop();
  });
});

import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { DATA_FORMAT, DATA_FORMAT_KEY } from '../../core/services/data-format/data-format.js';
import { apiClient } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';

const FIXTURES = path.join(packageRoot, 'test', 'fixtures', 'upgrade');

interface Expected {
  readonly svcVersion: string;
  readonly ciToken: string;
  readonly ciTokenId: string;
  readonly callId: string;
  readonly callResult: number;
  readonly secret: { readonly name: string; readonly DATABASE_URL: string };
  readonly domain: string;
  readonly schedule: string;
  readonly volume: { readonly name: string; readonly file: string; readonly text: string };
}

/** A copy of a kept data dir, as a server of that version left it (git does not keep the key file's 0600). */
function copyOf(fixture: string): string {
  const dataDir = tempDir('svc-upgrade-');
  cpSync(path.join(FIXTURES, fixture), dataDir, { recursive: true });
  chmodSync(path.join(dataDir, 'secrets.key'), 0o600);
  return dataDir;
}

/**
 * Data dirs made by earlier releases (test/fixtures/upgrade/make-data-dir.ts: a real `svc server`
 * used through the CLI and the API) opened by this code: migrated in place after a copy of the
 * log, and every object they hold is there and works — the app served with its secret, the token,
 * the spawned call's outcome, the schedule, the domain claim, the volume's file, the plan. A data
 * dir of a newer format is refused, naming both versions, and left as it was.
 */
for (const fixture of readdirSync(FIXTURES).filter((name) => name.startsWith('data-dir-'))) {
  const expected = JSON.parse(readFileSync(path.join(FIXTURES, fixture, 'expected.json'), 'utf8')) as Expected;

  describe(`a data dir made by svc ${expected.svcVersion} (${fixture}), opened by this svc`, function () {
    this.timeout(180_000);
    let platform: Platform;
    let dataDir: string;
    const api = (method: string, route: string, token = expected.ciToken) => apiClient(platform.url)(method, route, { token });

    before(async () => {
      dataDir = copyOf(fixture);
      // The call's outcome is kept for a day by default; the fixture is older than that.
      platform = await startPlatform({ config: testConfig({ dataDir, callResultTtlSeconds: 100 * 365 * 24 * 3600 }) });
    });
    after(async () => platform?.close());

    it(`migrates it to data format ${DATA_FORMAT}, keeping a copy of the state log from before, and says so`, async () => {
      const format = JSON.parse((await platform.controlPlane.store.get(DATA_FORMAT_KEY))!.value.toString()) as { format: number };
      assert.equal(format.format, DATA_FORMAT);
      const copies = readdirSync(path.join(dataDir, 'state')).filter((name) => name.startsWith('state.log.before-data-format-'));
      assert.equal(copies.length, 1, 'one copy of the log before the migration');
      assert.deepEqual(
        readFileSync(path.join(dataDir, 'state', copies[0]!)),
        readFileSync(path.join(FIXTURES, fixture, 'state', 'state.log')),
      );
      assert.ok(
        platform.controlPlane.warnings.some((line) => line.startsWith(`migrated svc's data from data format 0 to ${DATA_FORMAT}`)),
        platform.controlPlane.warnings.join('\n'),
      );
    });

    it('serves the app with its secret, and its token, plan, call, schedule, domain and volume are there', async () => {
      const app = await api('GET', '/api/v1/apps/keeper');
      assert.equal(app.status, 200, app.text);
      const env = app.json.deployments.find((d: { workload: string }) => d.workload === 'env');
      assert.deepEqual(await (await fetch(env.urls.path)).json(), { DATABASE_URL: expected.secret.DATABASE_URL });

      const tokens = await api('GET', '/api/v1/tokens');
      assert.ok(tokens.json.tokens.some((t: { id: string; name: string }) => t.id === expected.ciTokenId && t.name === 'ci'));
      assert.equal((await api('GET', '/api/v1/workspace')).json.plan, 'team');

      const call = await api('GET', `/api/v1/calls/${expected.callId}`);
      assert.deepEqual([call.json.call.status, call.json.call.result], ['succeeded', expected.callResult]);

      const runs = await api('GET', '/api/v1/apps/keeper/runs');
      assert.ok(JSON.stringify(runs.json).includes(`"${expected.schedule}"`), runs.text);
      const domains = await api('GET', '/api/v1/domains');
      assert.ok(
        domains.json.domains.some((d: { domain: string }) => d.domain === expected.domain),
        domains.text,
      );

      const volumes = await api('GET', '/api/v1/volumes');
      assert.ok(volumes.json.volumes.some((v: { name: string }) => v.name === expected.volume.name));
      const file = await fetch(`${platform.url}/api/v1/volumes/${expected.volume.name}/files?path=${expected.volume.file}`, {
        headers: { Authorization: `Bearer ${expected.ciToken}` },
      });
      assert.equal(await file.text(), expected.volume.text);
    });
  });

  describe(`a data dir of a newer data format than this svc reads (${fixture}, marked newer)`, function () {
    this.timeout(60_000);

    it('refuses to start, naming both versions, and changes nothing', async () => {
      const dataDir = copyOf(fixture);
      const first = await startPlatform({ config: testConfig({ dataDir }) });
      const newer = JSON.stringify({ format: DATA_FORMAT + 1, svcVersion: '9.9.0', since: new Date().toISOString() });
      const index = (await first.controlPlane.store.get(DATA_FORMAT_KEY))!.modifyIndex;
      assert.ok(await first.controlPlane.store.put(DATA_FORMAT_KEY, newer, { cas: index }));
      await first.close();
      const log = readFileSync(path.join(dataDir, 'state', 'state.log'));
      await assert.rejects(startPlatform({ config: testConfig({ dataDir }) }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'data_format_newer');
        assert.match(
          error.message,
          new RegExp(
            `^this data was written by svc 9\\.9\\.0 in data format ${DATA_FORMAT + 1}; this svc \\([\\d.]+\\) reads data format ${DATA_FORMAT} and older\\.$`,
          ),
        );
        return true;
      });
      assert.deepEqual(readFileSync(path.join(dataDir, 'state', 'state.log')), log, 'the log is as it was');
      assert.equal(existsSync(path.join(dataDir, 'owner-token')), true);
    });
  });
}

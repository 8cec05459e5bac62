/**
 * `svc app export` leaves a changed shared `svc_clients/__init__.py` alone
 * (with a warning), also when the change keeps the generated header: it only
 * writes that file when it is missing or exactly what it would write.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import appExport from '../../cli/commands/app-export.js';
import { packageRoot } from '../../core/model/paths.js';
import { tempDir } from '../helpers/config.js';
import { capture } from './fixture.js';

describe('svc app export and a changed svc_clients/__init__.py', function () {
  this.timeout(30_000);
  let server: http.Server;
  let url: string;
  const token = `svc_${'a'.repeat(40)}`;

  before(async () => {
    const iface = readFileSync(path.join(packageRoot, 'test', 'fixtures', 'export', 'quickstart.interface.json'), 'utf8');
    server = http.createServer((request, response) => {
      if (request.url === '/api/v1/apps/quickstart/interface' && request.headers.authorization === `Bearer ${token}`) {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(iface);
        return;
      }
      response.writeHead(404, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'not_found', message: `no ${request.url}` } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('leaves a svc_clients/__init__.py the user changed as it is (docs/cli.md), even when the header stays', async () => {
    const out = tempDir('svc-review-export-');
    const env = { SVC_SERVER: url, SVC_TOKEN: token };
    await appExport(capture({ env, cwd: out }).context, 'quickstart', { out });
    const shared = path.join(out, 'svc_clients', '__init__.py');
    const mine = `${readFileSync(shared, 'utf8')}\n# my own addition: re-export the clients I use\nfrom .quickstart import greet  # noqa\n`;
    writeFileSync(shared, mine);

    const again = capture({ env, cwd: out });
    await appExport(again.context, 'quickstart', { out });
    assert.equal(readFileSync(shared, 'utf8'), mine, `the change to ${shared} was overwritten; stderr:\n${again.stderr()}`);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../cli/api-client.js';
import { SvcError } from '../../core/model/errors.js';
import { tempDir } from '../helpers/config.js';
import { makeCertificate } from '../helpers/tls.js';

describe('ApiClient against a server whose certificate it does not trust', function () {
  this.timeout(30_000);
  let server: https.Server;
  let url: string;

  before(async () => {
    const certificate = await makeCertificate(tempDir('svc-cli-tls-'), 'self', ['localhost']);
    server = https.createServer({ cert: readFileSync(certificate.cert), key: readFileSync(certificate.key) }, (_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://localhost:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('says the certificate is not trusted and how to trust it, not just "unreachable"', async () => {
    const error = await new ApiClient({ server: url, serverSource: 'SVC_SERVER' }).request('GET', '/api/v1/whoami').then(
      () => assert.fail('expected an error'),
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof SvcError);
    assert.equal(error.code, 'server_unreachable');
    assert.equal(
      error.message,
      `cannot reach the svc server at ${url} (from SVC_SERVER): its TLS certificate is not trusted here (DEPTH_ZERO_SELF_SIGNED_CERT).`,
    );
    assert.match(error.hint!, /NODE_EXTRA_CA_CERTS/);
  });
});

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardedFor, protocolOf } from '../../../../core/traffic/gateway/client-origin.js';
import { curl } from '../../../helpers/tls.js';

describe('protocolOf() and forwardedFor() (real requests)', () => {
  let servers: http.Server[] = [];

  /** A server answering `<protocol> <forwarded for>` as the gateway would tell a workload. */
  async function start(trustProxy: boolean): Promise<string> {
    const server = http.createServer((req, res) => res.end(`${protocolOf(req, trustProxy)} ${forwardedFor(req, trustProxy)}`));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }
  afterEach(() => {
    for (const server of servers) server.close();
    servers = [];
  });

  it('ignores what a client says about itself unless a proxy is trusted', async () => {
    const url = await start(false);
    const answer = await curl(url, { headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '203.0.113.9' } });
    assert.equal(answer.body, 'http 127.0.0.1');
  });

  it("behind a trusted proxy: its X-Forwarded-Proto (the first value, http or https only), and its chain followed by the proxy's address", async () => {
    const url = await start(true);
    assert.equal(
      (await curl(url, { headers: { 'X-Forwarded-Proto': 'HTTPS, http', 'X-Forwarded-For': '203.0.113.9' } })).body,
      'https 203.0.113.9, 127.0.0.1',
    );
    assert.equal(
      (await curl(url, { headers: { 'X-Forwarded-Proto': 'gopher' } })).body,
      'http 127.0.0.1',
      'anything else: the connection says',
    );
    assert.equal((await curl(url)).body, 'http 127.0.0.1');
  });
});

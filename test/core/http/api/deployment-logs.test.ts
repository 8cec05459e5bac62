import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { deploymentLogRoutes, SSE_MAX_LAG_BYTES } from '../../../../core/http/api/deployment-logs.js';
import type { ApiServices } from '../../../../core/http/api/types.js';
import { DeploymentLogs } from '../../../../core/infra/logs/deployment-logs.js';

const key = { workspace: 'default', app: 'shop', stage: 'deployed', workload: 'api' };

async function follow(logs: DeploymentLogs): Promise<Readable> {
  const services = { logs, deployments: { get: () => ({ workloads: [{ name: 'api' }] }) } } as unknown as ApiServices;
  const route = deploymentLogRoutes[0]!;
  const answer = await route.handle(
    { params: { app: 'shop', workload: 'api' }, principal: { workspace: 'default' }, headers: { accept: 'text/event-stream' } } as never,
    services,
  );
  return answer.body as Readable;
}

describe('API: following deployment logs', () => {
  it('bounds what a client that does not read holds: it gets event: end (lagging) and is unsubscribed', async () => {
    const logs = new DeploymentLogs();
    const stream = await follow(logs);
    const text = 'x'.repeat(1000);
    for (let i = 0; i < 20_000; i++)
      logs.addUnitLine({ unit: 'default/shop/deployed@1/api', container: 'c1', stream: 'stdout', text, time: new Date() });
    assert.ok(stream.readableLength < 2 * 1024 * 1024 + SSE_MAX_LAG_BYTES, `the follower holds ${stream.readableLength} bytes`);
    assert.equal(logs.subscriberCount(key), 0);
    const chunks: string[] = [];
    for await (const chunk of stream) chunks.push(String(chunk));
    assert.match(chunks.join(''), /event: end\ndata: \{"reason":"lagging"\}\n\n$/);
  });
});

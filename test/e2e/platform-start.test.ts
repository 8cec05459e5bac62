import assert from 'node:assert/strict';
import net from 'node:net';
import { startPlatform } from '../../core/platform.js';
import { testConfig } from '../helpers/config.js';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

describe('startPlatform(): a start that fails after listening', function () {
  this.timeout(60_000);

  it('closes its server when the restore fails (an app record it cannot read), so that svc server exits', async () => {
    const config = testConfig({ port: await freePort() });
    const first = await startPlatform({ config });
    await first.controlPlane.store.put('apps/default/bad', '{"not": "an app record"}');
    await first.close();
    await assert.rejects(startPlatform({ config }), (error: { code?: string }) => error.code === 'state_corrupt');
    assert.equal(await listening(config.port), false, 'nothing listens after the failed start');
  });
});

import assert from 'node:assert/strict';
import net from 'node:net';
import { startPlatform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';
import { freePort } from '../helpers/free-port.js';

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

describe('startPlatform(): a port already in use', function () {
  this.timeout(60_000);

  it('says so with config_invalid and how to choose another, and stops what it built, so the same data dir starts again', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const config = testConfig({ port });
      await assert.rejects(startPlatform({ config }), (error: { code?: string; message?: string; hint?: string }) => {
        assert.equal(error.code, 'config_invalid');
        assert.equal(error.message, `port ${port} on 127.0.0.1 is already in use.`);
        assert.match(error.hint ?? '', /--port/);
        return true;
      });
      // The state lock was given back and nothing else holds the data dir.
      const again = await startPlatform({ config: { ...config, port: 0 } });
      await again.close();
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

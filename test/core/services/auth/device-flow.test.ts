import assert from 'node:assert/strict';
import { DeviceFlowError, type DeviceFlowErrorCode } from '../../../../core/services/auth/device-errors.js';
import type { DeviceAuthorizationResponse } from '../../../../core/services/auth/device-flow.js';
import type { Principal } from '../../../../core/infra/plugin/types.js';
import { authServices, storeKinds, type AuthServices } from './fixtures.js';

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

/** Polls and returns the DeviceFlowError code it fails with. */
async function pollError(services: AuthServices, deviceCode: unknown): Promise<DeviceFlowErrorCode> {
  try {
    await services.devices.poll(deviceCode);
  } catch (error) {
    assert.ok(error instanceof DeviceFlowError, `expected a DeviceFlowError, got ${String(error)}`);
    return error.error;
  }
  assert.fail('the poll succeeded');
}

for (const kind of storeKinds()) {
  describe(`DeviceAuthorizations (${kind.name})`, () => {
    let services: AuthServices;
    let owner: Principal;
    let request: DeviceAuthorizationResponse;

    beforeEach(async () => {
      services = await authServices(await kind.open());
      owner = { workspace: 'default', subject: services.owner.id };
      request = await services.devices.start({ clientName: 'svc CLI on laptop' });
    });

    afterEach(async () => {
      await services.close();
      await services.store.close();
    });

    it('answers the device authorization request as RFC 8628 §3.2 says', async () => {
      assert.match(request.user_code, USER_CODE);
      assert.match(request.device_code, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(
        { ...request, device_code: '', user_code: '' },
        {
          device_code: '',
          user_code: '',
          verification_uri: 'http://svc.test/login',
          verification_uri_complete: `http://svc.test/login?user_code=${request.user_code}`,
          expires_in: 600,
          interval: 5,
        },
      );
      const stored = (await services.store.list('')).map((e) => `${e.key} ${e.value.toString('utf8')}`).join('\n');
      assert.ok(!stored.includes(request.device_code), 'the device code is stored only as a hash');
    });

    it('says authorization_pending until a decision', async () => {
      assert.equal(await pollError(services, request.device_code), 'authorization_pending');
      services.clock.advance(5000);
      assert.equal(await pollError(services, request.device_code), 'authorization_pending');
    });

    it('says slow_down when polled sooner than the interval, and adds 5 s to the interval each time', async () => {
      assert.equal(await pollError(services, request.device_code), 'authorization_pending');
      services.clock.advance(4999);
      assert.equal(await pollError(services, request.device_code), 'slow_down'); // interval now 10 s
      services.clock.advance(9999);
      assert.equal(await pollError(services, request.device_code), 'slow_down'); // now 15 s
      services.clock.advance(15_000);
      assert.equal(await pollError(services, request.device_code), 'authorization_pending');
      services.clock.advance(14_999);
      assert.equal(await pollError(services, request.device_code), 'slow_down', 'the longer interval stays');
    });

    it("issues a working token of the approver's workspace exactly once", async () => {
      assert.deepEqual(await services.devices.pending(request.user_code.toLowerCase()), {
        userCode: request.user_code,
        clientName: 'svc CLI on laptop',
        expiresAt: '2030-01-01T00:10:00.000Z',
      });
      await services.devices.approve(request.user_code, owner, 'default');
      const granted = await services.devices.poll(request.device_code);
      assert.equal(granted.token_type, 'Bearer');
      assert.equal(granted.workspace, 'default');
      assert.deepEqual(await services.verifier.verify(granted.access_token), {
        workspace: 'default',
        subject: services.owner.id,
        tokenId: granted.token_id,
      });
      assert.equal((await services.tokens.list(owner)).find((t) => t.id === granted.token_id)?.name, 'svc login (svc CLI on laptop)');
      assert.equal(await pollError(services, request.device_code), 'invalid_grant', 'a second poll after success');
      assert.deepEqual(await services.store.keys('device-auth/'), [], 'the request is gone');
    });

    it('issues one token when polls race after approval', async () => {
      await services.devices.approve(request.user_code, owner, 'default');
      const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => services.devices.poll(request.device_code)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as DeviceFlowError).error, 'invalid_grant');
      assert.equal((await services.tokens.list(owner)).length, 1);
    });

    it('accepts the user code as people type it', async () => {
      const typed = ` ${request.user_code.toLowerCase().replace('-', ' ')} `;
      await services.devices.approve(typed, owner, 'default');
      assert.equal((await services.devices.poll(request.device_code)).workspace, 'default');
    });

    it('says access_denied after a denial, then invalid_grant', async () => {
      await services.devices.deny(request.user_code);
      assert.equal(await pollError(services, request.device_code), 'access_denied');
      assert.equal(await pollError(services, request.device_code), 'invalid_grant');
    });

    it('says expired_token once the request expires, and refuses to approve it', async () => {
      services.clock.advance(600_000);
      await assert.rejects(services.devices.approve(request.user_code, owner, 'default'), {
        code: 'not_found',
        message: `there is no sign-in request with the code ${request.user_code}; it may have expired`,
      });
      assert.equal(await pollError(services, request.device_code), 'expired_token');
      assert.equal(await pollError(services, request.device_code), 'invalid_grant');
    });

    it('says expired_token even for an approved request that expired before the poll', async () => {
      await services.devices.approve(request.user_code, owner, 'default');
      services.clock.advance(600_000);
      assert.equal(await pollError(services, request.device_code), 'expired_token');
      assert.deepEqual(await services.tokens.list(owner), []);
    });

    it('says invalid_request without a device code and invalid_grant for an unknown one', async () => {
      assert.equal(await pollError(services, undefined), 'invalid_request');
      assert.equal(await pollError(services, ''), 'invalid_request');
      assert.equal(await pollError(services, 'not-a-device-code'), 'invalid_grant');
      assert.equal(await pollError(services, 'A'.repeat(43)), 'invalid_grant');
    });

    it('lets only a principal of the workspace approve, and only once', async () => {
      await services.workspaces.create('acme');
      await assert.rejects(services.devices.approve(request.user_code, owner, 'acme'), { code: 'forbidden' });
      await services.devices.approve(request.user_code, owner, 'default');
      await assert.rejects(services.devices.approve(request.user_code, owner, 'default'), {
        code: 'conflict',
        message: /was already approved/,
      });
      await assert.rejects(services.devices.deny(request.user_code), { code: 'conflict' });
    });

    it('gives specific messages for user codes that cannot exist', async () => {
      await assert.rejects(services.devices.approve('BCDF-GHJ', owner, 'default'), {
        code: 'bad_request',
        message: /has 7 letters; a code has 8/,
      });
      await assert.rejects(services.devices.approve('ABCD-FGHJ', owner, 'default'), {
        code: 'bad_request',
        message: /has "A", which codes never contain/,
      });
      const unknown = request.user_code === 'BCDF-GHJK' ? 'BCDF-GHJL' : 'BCDF-GHJK';
      await assert.rejects(services.devices.approve(unknown, owner, 'default'), {
        code: 'not_found',
        message: /no sign-in request with the code/,
      });
    });

    it('validates the client name', async () => {
      await assert.rejects(services.devices.start({ clientName: '' }), {
        code: 'bad_request',
        message: /client_name must be 1 to 80 characters/,
      });
      await assert.rejects(services.devices.start({ clientName: 3 }), { code: 'bad_request', message: /client_name must be a string/ });
      const unnamed = await services.devices.start();
      assert.equal((await services.devices.pending(unnamed.user_code)).clientName, 'svc CLI');
    });

    it('sweeps expired requests and their user codes, keeping live ones', async () => {
      services.clock.advance(300_000);
      const live = await services.devices.start();
      services.clock.advance(300_000);
      assert.equal(await services.devices.sweep(), 2);
      assert.equal((await services.store.keys('device-auth/')).length, 2);
      assert.equal(await pollError(services, live.device_code), 'authorization_pending');
    });

    it('gives the error in RFC 8628 JSON form with status 400', () => {
      const error = new DeviceFlowError('slow_down');
      assert.equal(error.status, 400);
      assert.deepEqual(error.body(), { error: 'slow_down', error_description: 'polling too fast; the interval is now 5 seconds longer' });
    });
  });
}

import assert from 'node:assert/strict';
import { DEVICE_CODE_GRANT } from '../../../../core/http/api/device.js';
import { startApiPlatform, tokenFor, type ApiFixture } from './platform.js';

describe('API device flow (RFC 8628) over HTTP', () => {
  let f: ApiFixture;
  before(async () => (f = await startApiPlatform()));
  after(async () => f?.platform.close());
  afterEach(() => assert.deepEqual(f.reports, [], 'no unexpected errors'));

  const start = async (clientName = 'laptop') => {
    const answer = await f.call('POST', '/api/v1/device/code', { json: { client_name: clientName } });
    assert.equal(answer.status, 200, answer.text);
    return answer.json as {
      device_code: string;
      user_code: string;
      verification_uri: string;
      verification_uri_complete: string;
      expires_in: number;
      interval: number;
    };
  };
  const poll = (deviceCode: string) =>
    f.call('POST', '/api/v1/device/token', { json: { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode } });

  it('POST /device/code answers RFC 8628 §3.2 with the /device page of this server', async () => {
    const code = await start();
    assert.deepEqual(Object.keys(code).sort(), [
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    assert.match(code.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(code.verification_uri, `${f.platform.url}/device`);
    assert.equal(code.verification_uri_complete, `${f.platform.url}/device?user_code=${code.user_code}`);
    assert.deepEqual([code.expires_in, code.interval], [600, 5]);
  });

  it('runs end to end: pending → approved → a token that works → invalid_grant on the next poll', async () => {
    const code = await start('ci runner');
    const pending = await poll(code.device_code);
    assert.equal(pending.status, 400);
    assert.deepEqual(pending.json, { error: 'authorization_pending', error_description: 'the sign-in has not been approved yet' });
    assert.equal(pending.headers.get('cache-control'), 'no-store');

    const approved = await f.call('POST', '/api/v1/device/approve', { token: f.owner, json: { user_code: code.user_code.toLowerCase() } });
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(approved.json, { user_code: code.user_code, client_name: 'ci runner', status: 'approved', workspace: 'default' });

    const granted = await poll(code.device_code);
    assert.equal(granted.status, 200, granted.text);
    assert.equal(granted.json.token_type, 'Bearer');
    assert.equal(granted.json.workspace, 'default');
    const whoami = await f.call('GET', '/api/v1/whoami', { token: granted.json.access_token });
    assert.equal(whoami.status, 200);
    assert.deepEqual(whoami.json, {
      workspace: 'default',
      subject: f.platform.controlPlane.owner.account.id,
      tokenId: granted.json.token_id,
      role: 'owner',
    });

    const again = await poll(code.device_code);
    assert.equal(again.status, 400);
    assert.equal(again.json.error, 'invalid_grant');
  });

  it('answers slow_down to a client that polls sooner than the interval', async () => {
    const code = await start();
    assert.equal((await poll(code.device_code)).json.error, 'authorization_pending');
    const fast = await poll(code.device_code);
    assert.equal(fast.status, 400);
    assert.equal(fast.json.error, 'slow_down');
    assert.match(fast.json.error_description, /wait 10 seconds/);
  });

  it('answers access_denied after a denial', async () => {
    const code = await start();
    const denied = await f.call('POST', '/api/v1/device/deny', { token: f.owner, json: { user_code: code.user_code } });
    assert.equal(denied.status, 200);
    assert.equal(denied.json.status, 'denied');
    assert.equal((await poll(code.device_code)).json.error, 'access_denied');
  });

  it('takes form-encoded bodies, as OAuth clients send them, and ignores parameters it does not know', async () => {
    const started = await f.call('POST', '/api/v1/device/code', {
      form: { client_id: 'svc-cli', client_name: 'form client', scope: 'all' },
    });
    assert.equal(started.status, 200, started.text);
    const polled = await f.call('POST', '/api/v1/device/token', {
      form: { grant_type: DEVICE_CODE_GRANT, device_code: started.json.device_code, client_id: 'svc-cli' },
    });
    assert.equal(polled.json.error, 'authorization_pending');
  });

  it('a token of another workspace approves for its own workspace', async () => {
    const acme = await tokenFor(f.platform, 'acme');
    const code = await start();
    assert.equal(
      (await f.call('POST', '/api/v1/device/approve', { token: acme.secret, json: { user_code: code.user_code } })).json.workspace,
      'acme',
    );
    const granted = await poll(code.device_code);
    assert.equal(granted.json.workspace, 'acme');
    assert.equal((await f.call('GET', '/api/v1/whoami', { token: granted.json.access_token })).json.workspace, 'acme');
  });

  describe('token endpoint errors, in OAuth shape (RFC 6749 §5.2)', () => {
    const cases: [string, Record<string, unknown> | string, string][] = [
      ['no grant_type', { device_code: 'x' }, 'invalid_request'],
      ['another grant_type', { grant_type: 'password', device_code: 'x' }, 'unsupported_grant_type'],
      ['no device_code', { grant_type: DEVICE_CODE_GRANT }, 'invalid_request'],
      ['a device_code of the wrong type', { grant_type: DEVICE_CODE_GRANT, device_code: 42 }, 'invalid_request'],
      ['an unknown device_code', { grant_type: DEVICE_CODE_GRANT, device_code: 'A'.repeat(43) }, 'invalid_grant'],
      ['a malformed JSON body', '{"grant_type":', 'invalid_request'],
    ];
    for (const [what, body, error] of cases) {
      it(`answers 400 ${error} for ${what}`, async () => {
        const answer =
          typeof body === 'string'
            ? await f.call('POST', '/api/v1/device/token', { body, headers: { 'Content-Type': 'application/json' } })
            : await f.call('POST', '/api/v1/device/token', { json: body });
        assert.equal(answer.status, 400);
        assert.deepEqual(Object.keys(answer.json).sort(), ['error', 'error_description']);
        assert.equal(answer.json.error, error);
      });
    }

    it('answers invalid_request for a repeated form parameter and for a client_name or client_id of the wrong type', async () => {
      const repeated = await f.call('POST', '/api/v1/device/token', {
        body: `grant_type=${encodeURIComponent(DEVICE_CODE_GRANT)}&device_code=a&device_code=b`,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      assert.deepEqual(repeated.json, {
        error: 'invalid_request',
        error_description: 'the parameter "device_code" appears more than once.',
      });
      const badName = await f.call('POST', '/api/v1/device/code', { json: { client_name: 7 } });
      assert.equal(badName.status, 400);
      assert.equal(badName.json.error, 'invalid_request');
      assert.match(badName.json.error_description, /client_name must be a string/);
      const badId = await f.call('POST', '/api/v1/device/code', { json: { client_name: 'cli', client_id: {} } });
      assert.deepEqual(
        [badId.status, badId.json.error, badId.json.error_description],
        [400, 'invalid_request', 'client_id must be a string'],
      );
    });
  });

  describe('approve and deny errors', () => {
    it('refuses a code that cannot exist (400), an unknown one (404) and a decided one (409)', async () => {
      const impossible = await f.call('POST', '/api/v1/device/approve', { token: f.owner, json: { user_code: 'AAAA-AAAA' } });
      assert.equal(impossible.status, 400);
      assert.match(impossible.json.error.message, /has "A", which codes never contain/);
      const unknown = await f.call('POST', '/api/v1/device/approve', { token: f.owner, json: { user_code: 'BBBB-BBBB' } });
      assert.equal(unknown.status, 404);
      const code = await start();
      assert.equal((await f.call('POST', '/api/v1/device/deny', { token: f.owner, json: { user_code: code.user_code } })).status, 200);
      const decided = await f.call('POST', '/api/v1/device/approve', { token: f.owner, json: { user_code: code.user_code } });
      assert.equal(decided.status, 409);
      assert.match(decided.json.error.message, /was already denied/);
    });

    it('refuses a missing code, a code of the wrong type and unknown fields', async () => {
      for (const [json, message] of [
        [{}, /the field "user_code" is required/],
        [{ user_code: 12345678 }, /the code must be a string, not number/],
        [{ user_code: 'BBBB-BBBB', workspace: 'acme' }, /unknown field "workspace"; this route takes "user_code"/],
      ] as const) {
        const answer = await f.call('POST', '/api/v1/device/deny', { token: f.owner, json });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.json.error.code, 'bad_request');
        assert.match(answer.json.error.message, message);
      }
    });
  });
});

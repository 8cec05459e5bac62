import assert from 'node:assert/strict';
import { generateToken } from '../../core/services/auth/tokens.js';
import { MemoryTokenVerifier } from '../../core/services/auth/verifier.js';
import { createPluginHost } from '../../core/infra/plugin/host.js';
import type { AuthRequest } from '../../core/infra/plugin/types.js';
import authTokenPlugin from '../../plugins/auth-token/index.js';

const { secret, id } = generateToken();
const verifier = new MemoryTokenVerifier();
verifier.add(secret, { workspace: 'acme', subject: 'alice' });
const host = createPluginHost([authTokenPlugin({ verifier })]);
const alice = { workspace: 'acme', subject: 'alice', tokenId: id };

function request(
  headers: AuthRequest['headers'],
  url = 'http://localhost/acme/app/ws',
  transport: AuthRequest['transport'] = 'http',
): AuthRequest {
  return { headers, url: new URL(url), workspace: 'acme', transport };
}
const authenticate = (req: AuthRequest) => host.first('authenticate', req);

describe('authTokenPlugin()', () => {
  it('is a valid plugin named svc:auth-token', () => {
    assert.deepEqual(
      host.plugins.map((p) => p.name),
      ['svc:auth-token'],
    );
  });

  it('returns the principal of a valid bearer token', async () => {
    assert.deepEqual(await authenticate(request({ authorization: `Bearer ${secret}` })), alice);
  });

  it('accepts any case of the scheme and surrounding spaces', async () => {
    assert.deepEqual(await authenticate(request({ authorization: `  bEaReR   ${secret}  ` })), alice);
  });

  it('returns null for another scheme, extra words or several headers', async () => {
    assert.equal(await authenticate(request({ authorization: `Basic ${secret}` })), null);
    assert.equal(await authenticate(request({ authorization: `Bearer ${secret} extra` })), null);
    assert.equal(await authenticate(request({ authorization: 'Bearer' })), null);
    assert.equal(await authenticate(request({ authorization: [`Bearer ${secret}`, `Bearer ${secret}`] })), null);
  });

  it('returns null for an unknown or revoked token', async () => {
    assert.equal(await authenticate(request({ authorization: `Bearer ${generateToken().secret}` })), null);
    const other = generateToken();
    const local = new MemoryTokenVerifier();
    local.add(other.secret, { workspace: 'acme', subject: 'bob' });
    const localHost = createPluginHost([authTokenPlugin({ verifier: local })]);
    const req = request({ authorization: `Bearer ${other.secret}` });
    assert.equal((await localHost.first('authenticate', req))?.subject, 'bob');
    local.revoke(other.id);
    assert.equal(await localHost.first('authenticate', req), null);
  });

  it('returns null without credentials', async () => {
    assert.equal(await authenticate(request({})), null);
  });

  it('accepts ?token= only on WebSocket upgrades, which the gateway strips it from', async () => {
    assert.deepEqual(await authenticate(request({}, `http://localhost/acme/app/ws?token=${secret}`, 'websocket')), alice);
    assert.equal(await authenticate(request({}, `http://localhost/acme/app/hello?token=${secret}`, 'http')), null);
  });

  it('refuses a repeated ?token= and prefers the Authorization header', async () => {
    assert.equal(await authenticate(request({}, `http://localhost/acme/app/ws?token=${secret}&token=${secret}`, 'websocket')), null);
    assert.equal(
      await authenticate(request({ authorization: 'Bearer nope' }, `http://localhost/acme/app/ws?token=${secret}`, 'websocket')),
      null,
    );
  });
});

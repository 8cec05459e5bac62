/**
 * `svc serve --server`'s arguments: what the parser made of `--server` and
 * the target, and how the printed curl lines send the token (never the
 * secret itself).
 */
import assert from 'node:assert/strict';
import { serveTarget } from '../../cli/commands/serve.js';
import type { ResolvedCredentials } from '../../cli/credentials.js';
import { tokenHint } from '../../cli/serve/remote.js';

describe('svc serve --server: arguments', () => {
  it('tells the target from the server URL, whichever order they came in', () => {
    assert.deepEqual(serveTarget('app.py', undefined), { target: 'app.py', server: undefined });
    assert.deepEqual(serveTarget('app.py', true), { target: 'app.py', server: true });
    assert.deepEqual(serveTarget('app.py', 'https://svc.example.com'), { target: 'app.py', server: 'https://svc.example.com' });
    // `svc serve --server app.py`: the parser gave the target to --server.
    assert.deepEqual(serveTarget(undefined, 'app.py'), { target: 'app.py', server: true });
    assert.deepEqual(serveTarget(undefined, 'pkg.app'), { target: 'pkg.app', server: true });
    assert.throws(() => serveTarget(undefined, 'http://svc.example.com'), { code: 'usage_invalid' });
    assert.throws(() => serveTarget(undefined, undefined), { code: 'usage_invalid' });
  });

  it('curl lines read the token from SVC_TOKEN, the owner-token file, or say where the signed-in one is', () => {
    const credentials = (kind: 'env' | 'file' | 'local', description: string): ResolvedCredentials => ({
      server: 'http://127.0.0.1:7420',
      token: 'svc_secret',
      workspace: null,
      warnings: [],
      sources: { server: { kind, description }, token: { kind, description } },
    });
    assert.deepEqual(tokenHint(credentials('env', 'SVC_TOKEN')), { expression: '$SVC_TOKEN' });
    assert.deepEqual(tokenHint(credentials('local', '/home/you/.svc/data/owner-token')), {
      expression: "$(cat '/home/you/.svc/data/owner-token')",
    });
    const saved = tokenHint(credentials('file', '/home/you/.svc/credentials.json'));
    assert.equal(saved.expression, '$SVC_TOKEN');
    assert.match(saved.note ?? '', /signed in with .*\/home\/you\/\.svc\/credentials\.json/);
    assert.ok(!JSON.stringify(saved).includes('svc_secret'));
  });
});

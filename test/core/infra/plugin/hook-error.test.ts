import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { isHookError, wrapHookError } from '../../../../core/infra/plugin/hook-error.js';
import { createPluginHost } from '../../../../core/infra/plugin/host.js';
import type { AuthRequest, Plugin, PluginHooks } from '../../../../core/infra/plugin/types.js';

const request: AuthRequest = { headers: {}, url: new URL('http://localhost/x'), workspace: 'default', transport: 'http' };

function plugin(name: string, hooks: Partial<PluginHooks>): Plugin {
  return { name: `test:${name}`, apiVersion: 1, hooks };
}

function failingWith(thrown: unknown) {
  return createPluginHost([
    plugin('thrower', {
      authenticate: () => {
        throw thrown;
      },
    }),
  ]);
}

describe('PluginHost error wrapping', () => {
  it('turns a plain Error into plugin_error naming the plugin and hook, keeping the cause', async () => {
    const original = new TypeError('cannot read properties of undefined');
    await assert.rejects(failingWith(original).first('authenticate', request), (error: SvcError) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'plugin_error');
      assert.equal(error.status, 500);
      assert.equal(error.message, 'plugin "test:thrower" failed in hook "authenticate": cannot read properties of undefined');
      assert.deepEqual(error.details, { plugin: 'test:thrower', hook: 'authenticate' });
      assert.equal(error.cause, original);
      return true;
    });
  });

  it('wraps thrown non-errors too', async () => {
    await assert.rejects(failingWith('just a string').first('authenticate', request), {
      code: 'plugin_error',
      message: 'plugin "test:thrower" failed in hook "authenticate": just a string',
    });
  });

  it('keeps the code, status, hint and headers of a deliberate SvcError', async () => {
    const original = new SvcError('unauthorized', 'token expired', {
      hint: 'log in again',
      headers: { 'WWW-Authenticate': 'Bearer' },
      details: { expiredAt: 1 },
    });
    await assert.rejects(failingWith(original).first('authenticate', request), (error: SvcError) => {
      assert.equal(error.code, 'unauthorized');
      assert.equal(error.status, 401);
      assert.equal(error.message, 'plugin "test:thrower" failed in hook "authenticate": token expired');
      assert.equal(error.hint, 'log in again');
      assert.deepEqual(error.headers, { 'WWW-Authenticate': 'Bearer' });
      assert.deepEqual(error.details, { plugin: 'test:thrower', hook: 'authenticate', details: { expiredAt: 1 } });
      assert.equal(error.cause, original);
      return true;
    });
  });

  it('does not wrap an error a nested host call already wrapped', async () => {
    const inner = createPluginHost([
      plugin('inner', {
        authenticate: () => {
          throw new Error('boom');
        },
      }),
    ]);
    const outer = createPluginHost([plugin('outer', { authenticate: (req) => inner.first('authenticate', req) })]);
    await assert.rejects(outer.first('authenticate', request), (error: SvcError) => {
      assert.equal(error.message, 'plugin "test:inner" failed in hook "authenticate": boom');
      assert.deepEqual(error.details, { plugin: 'test:inner', hook: 'authenticate' });
      return true;
    });
  });
});

describe('wrapHookError()', () => {
  it('marks what it wraps and returns it unchanged the second time', () => {
    const once = wrapHookError(new Error('x'), 'test:a', 'onEvent');
    assert.equal(isHookError(once), true);
    assert.equal(wrapHookError(once, 'test:b', 'authenticate'), once);
    assert.equal(isHookError(new SvcError('plugin_error', 'x')), false);
  });
});

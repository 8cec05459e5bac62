import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { createPluginHost, type PluginHost } from '../../../../core/infra/plugin/host.js';
import type { AuthRequest, DeployContext, Plugin, PluginHooks } from '../../../../core/infra/plugin/types.js';
import type { AppSpec } from '../../../../core/model/workload/types.js';

const app: AppSpec = { name: 'demo', entry: 'app.py', sdkVersion: '0.1.0', images: [], workloads: [] };
const deploy: DeployContext = { workspace: 'default', stage: 'deployed', principal: null };
const request: AuthRequest = { headers: {}, url: new URL('http://localhost/default/demo/hello'), workspace: 'default', transport: 'http' };

function plugin(name: string, hooks: Partial<PluginHooks> = {}, extra: Partial<Plugin> = {}): Plugin {
  return { name: `test:${name}`, apiVersion: 1, hooks, ...extra };
}

/** A plugin whose onEvent records its name into `calls`, with the given hook order. */
function recorder(name: string, calls: string[], extra: Partial<Plugin> = {}, order?: 'pre' | 'post'): Plugin {
  const handler = () => void calls.push(name);
  return plugin(name, { onEvent: order ? { handler, order } : handler }, extra);
}

const event = { type: 'deployment.stopped', workspace: 'default', app: 'demo', stage: 'deployed' } as const;

describe('createPluginHost()', () => {
  it('skips falsy entries and flattens nested arrays', () => {
    const host = createPluginHost([plugin('a'), false, null, undefined, [plugin('b'), [false && plugin('x'), plugin('c')]]]);
    assert.deepEqual(
      host.plugins.map((p) => p.name),
      ['test:a', 'test:b', 'test:c'],
    );
  });

  it('refuses a plugin built for another API version, naming both versions', () => {
    assert.throws(
      () => createPluginHost([plugin('old', {}, { apiVersion: 2 })]),
      (error: SvcError) => {
        assert.equal(error.code, 'plugin_incompatible');
        assert.match(error.message, /plugin "test:old" targets plugin API version 2, but this svc provides version 1/);
        return true;
      },
    );
  });

  it('refuses a missing or non-integer apiVersion', () => {
    const noVersion = { name: 'test:none' } as unknown as Plugin;
    assert.throws(() => createPluginHost([noVersion]), { code: 'plugin_incompatible' });
    assert.throws(() => createPluginHost([plugin('frac', {}, { apiVersion: 1.5 })]), { code: 'plugin_incompatible' });
  });

  it('refuses an unknown hook, listing the valid ones', () => {
    const typo = plugin('typo', { authenticat: () => null } as Partial<PluginHooks>);
    assert.throws(
      () => createPluginHost([typo]),
      (error: SvcError) => {
        assert.equal(error.code, 'plugin_invalid');
        assert.match(
          error.message,
          /"test:typo" declares unknown hook "authenticat"; valid hooks are authenticate, resolveRoute, authorizeDeploy, transformJob, onEvent/,
        );
        return true;
      },
    );
  });

  it('refuses two plugins with the same name', () => {
    assert.throws(() => createPluginHost([plugin('twin'), [plugin('twin')]]), {
      code: 'plugin_invalid',
      message: /"test:twin" is registered twice/,
    });
  });

  it('refuses names that are not scope:kebab-name', () => {
    for (const name of ['auth', 'svc:Auth', 'svc:auth_token', ':x', 'svc:']) {
      assert.throws(() => createPluginHost([{ name, apiVersion: 1 }]), { code: 'plugin_invalid' }, name);
    }
  });

  it('refuses a factory passed without calling it', () => {
    const factory = () => plugin('lazy');
    assert.throws(() => createPluginHost([factory as unknown as Plugin]), { code: 'plugin_invalid', hint: /Call the plugin factory/ });
  });

  it('refuses a hook that is neither a function nor { handler }', () => {
    const bad = plugin('bad', { onEvent: { order: 'pre' } } as unknown as Partial<PluginHooks>);
    assert.throws(() => createPluginHost([bad]), { code: 'plugin_invalid', message: /hook "onEvent"/ });
    const badOrder = plugin('order', { onEvent: { handler() {}, order: 'first' } } as unknown as Partial<PluginHooks>);
    assert.throws(() => createPluginHost([badOrder]), { code: 'plugin_invalid' });
  });
});

describe('PluginHost ordering', () => {
  it('runs enforce "pre" plugins, then normal, then "post", keeping registration order within a tier', async () => {
    const calls: string[] = [];
    const host = createPluginHost([
      recorder('post1', calls, { enforce: 'post' }),
      recorder('normal1', calls),
      recorder('pre1', calls, { enforce: 'pre' }),
      recorder('normal2', calls),
      recorder('pre2', calls, { enforce: 'pre' }),
    ]);
    assert.deepEqual(
      host.plugins.map((p) => p.name.slice(5)),
      ['pre1', 'pre2', 'normal1', 'normal2', 'post1'],
    );
    await host.parallel('onEvent', event); // handlers start in order, synchronously
    assert.deepEqual(calls, ['pre1', 'pre2', 'normal1', 'normal2', 'post1']);
  });

  it("applies a hook's order within its plugin's enforce tier", async () => {
    const calls: string[] = [];
    const host = createPluginHost([
      recorder('normal-post', calls, {}, 'post'),
      recorder('normal', calls),
      recorder('normal-pre', calls, {}, 'pre'),
      recorder('pre-post', calls, { enforce: 'pre' }, 'post'),
      recorder('pre', calls, { enforce: 'pre' }),
      recorder('post-pre', calls, { enforce: 'post' }, 'pre'),
    ]);
    await host.parallel('onEvent', event);
    assert.deepEqual(calls, ['pre', 'pre-post', 'normal-pre', 'normal', 'normal-post', 'post-pre']);
  });

  it('sorts each hook once and caches it', async () => {
    const calls: string[] = [];
    const host = createPluginHost([recorder('b', calls, {}, 'post'), recorder('a', calls)]);
    await host.parallel('onEvent', event);
    await host.parallel('onEvent', event);
    assert.deepEqual(calls, ['a', 'b', 'a', 'b']);
  });
});

describe('PluginHost#has()', () => {
  it('tells whether any plugin implements a hook', () => {
    const host = createPluginHost([plugin('a', { onEvent() {} }), plugin('b')]);
    assert.equal(host.has('onEvent'), true);
    assert.equal(host.has('authenticate'), false);
  });
});

describe('PluginHost#first()', () => {
  it('returns the first non-null result and does not call later hooks', async () => {
    const called: string[] = [];
    const host = createPluginHost([
      plugin('none', { authenticate: () => void called.push('none') }),
      plugin('null', { authenticate: async () => (called.push('null'), null) }),
      plugin('hit', { authenticate: async () => (called.push('hit'), { workspace: 'default', subject: 'alice' }) }),
      plugin('late', { authenticate: () => (called.push('late'), { workspace: 'default', subject: 'bob' }) }),
    ]);
    assert.deepEqual(await host.first('authenticate', request), { workspace: 'default', subject: 'alice' });
    assert.deepEqual(called, ['none', 'null', 'hit']);
  });

  it('resolves null when no plugin answers or none implements the hook', async () => {
    assert.equal(await createPluginHost([plugin('a', { authenticate: () => undefined })]).first('authenticate', request), null);
    assert.equal(await createPluginHost([]).first('authenticate', request), null);
  });
});

describe('PluginHost#firstNow()', () => {
  const alice = { workspace: 'default', subject: 'alice' };

  it('answers with the value itself while every handler asked answers synchronously', () => {
    const host = createPluginHost([plugin('null', { authenticate: () => null }), plugin('hit', { authenticate: () => alice })]);
    assert.deepEqual(host.firstNow('authenticate', request), alice);
    assert.equal(createPluginHost([plugin('none', { authenticate: () => undefined })]).firstNow('authenticate', request), null);
  });

  it('turns into a promise at the first handler that returns one, and asks the later ones only if it found nothing', async () => {
    const called: string[] = [];
    const host = createPluginHost([
      plugin('sync-null', { authenticate: () => void called.push('sync-null') }),
      plugin('async-null', { authenticate: async () => (called.push('async-null'), null) }),
      plugin('sync-hit', { authenticate: () => (called.push('sync-hit'), alice) }),
      plugin('late', { authenticate: () => (called.push('late'), null) }),
    ]);
    const found = host.firstNow('authenticate', request);
    assert.ok(found instanceof Promise);
    assert.deepEqual(await found, alice);
    assert.deepEqual(called, ['sync-null', 'async-null', 'sync-hit']);
  });

  it('throws a synchronous failure at once and rejects an asynchronous one, both naming the plugin and hook', async () => {
    const refusal = new SvcError('forbidden', 'no entry');
    const sync = createPluginHost([
      plugin('strict', {
        authenticate: () => {
          throw refusal;
        },
      }),
    ]);
    assert.throws(
      () => sync.firstNow('authenticate', request),
      (error: SvcError) => error.code === 'forbidden' && /plugin "test:strict" failed in hook "authenticate"/.test(error.message),
    );
    const later = createPluginHost([
      plugin('slow', {
        authenticate: async () => {
          throw refusal;
        },
      }),
    ]);
    await assert.rejects(
      Promise.resolve(later.firstNow('authenticate', request)),
      (error: SvcError) => error.code === 'forbidden' && /plugin "test:slow"/.test(error.message),
    );
    await assert.rejects(
      sync.first('authenticate', request),
      (error: SvcError) => error.code === 'forbidden',
      'first() rejects where firstNow() throws',
    );
  });
});

describe('PluginHost#sequential()', () => {
  it('passes each result to the next plugin and resolves the last one', async () => {
    const host = createPluginHost([
      plugin('rename', { authorizeDeploy: (spec) => ({ ...spec, name: `${spec.name}-a` }) }),
      plugin('async', { authorizeDeploy: async (spec, ctx) => ({ ...spec, name: `${spec.name}-${ctx.workspace}` }) }),
    ]);
    const result = await host.sequential('authorizeDeploy', app, deploy);
    assert.equal(result.name, 'demo-a-default');
    assert.equal(app.name, 'demo');
  });

  it('resolves the initial value when no plugin implements the hook', async () => {
    assert.equal(await createPluginHost([]).sequential('authorizeDeploy', app, deploy), app);
  });

  it('fails with plugin_error when a plugin returns nothing', async () => {
    const host = createPluginHost([plugin('forgetful', { authorizeDeploy: () => undefined as unknown as AppSpec })]);
    await assert.rejects(host.sequential('authorizeDeploy', app, deploy), {
      code: 'plugin_error',
      message: 'plugin "test:forgetful" failed in hook "authorizeDeploy": returned undefined',
    });
  });

  it('stops at a refusal and keeps its code', async () => {
    let after = false;
    const host = createPluginHost([
      plugin('policy', {
        authorizeDeploy: () => {
          throw new SvcError('forbidden', 'GPUs are not allowed here');
        },
      }),
      plugin('after', { authorizeDeploy: (spec) => ((after = true), spec) }),
    ]);
    await assert.rejects(host.sequential('authorizeDeploy', app, deploy), { code: 'forbidden', status: 403 });
    assert.equal(after, false);
  });
});

describe('PluginHost#parallel()', () => {
  it('runs every handler concurrently and resolves the wrapped failures', async () => {
    const reported: SvcError[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const finished: string[] = [];
    const host = createPluginHost(
      [
        plugin('slow', {
          onEvent: async () => {
            await gate;
            finished.push('slow');
          },
        }),
        plugin('broken', {
          onEvent: () => {
            throw new Error('disk full');
          },
        }),
        plugin('rejects', {
          onEvent: async () => {
            throw new SvcError('forbidden', 'nope');
          },
        }),
        plugin('fast', {
          onEvent: () => {
            finished.push('fast');
            release();
          },
        }),
      ],
      { onParallelError: (error) => reported.push(error) },
    );
    const failures = await host.parallel('onEvent', event);
    assert.deepEqual(finished, ['fast', 'slow']);
    assert.deepEqual(
      failures.map((f) => [f.code, f.message]),
      [
        ['plugin_error', 'plugin "test:broken" failed in hook "onEvent": disk full'],
        ['forbidden', 'plugin "test:rejects" failed in hook "onEvent": nope'],
      ],
    );
    assert.deepEqual(reported, failures);
  });

  it('resolves an empty list when every handler succeeds', async () => {
    const host = createPluginHost([plugin('ok', { onEvent: async () => {} })], {
      onParallelError: () => assert.fail('no failure expected'),
    });
    assert.deepEqual(await host.parallel('onEvent', event), []);
  });
});

describe('PluginHost runner types', () => {
  it('rejects calling a hook with the wrong runner at compile time', () => {
    // Never called: the @ts-expect-error lines are the test (tsc fails if they compile).
    const unused = (host: PluginHost) => {
      // @ts-expect-error authorizeDeploy is sequential, not first
      void host.first('authorizeDeploy', app, deploy);
      // @ts-expect-error onEvent is parallel, not sequential
      void host.sequential('onEvent', event);
      // @ts-expect-error authenticate is first, not parallel
      void host.parallel('authenticate', request);
      // @ts-expect-error wrong argument type for authenticate
      void host.first('authenticate', app);
    };
    assert.equal(typeof unused, 'function');
  });
});

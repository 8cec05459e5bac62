import assert from 'node:assert/strict';
import { createPluginHost, type PluginHost } from '../../../core/infra/plugin/host.js';
import type { DomainDirectory } from '../../../core/model/domains/types.js';
import type { AppSpec } from '../../../core/model/workload/types.js';
import { createMemoryStateStore } from '../../../core/infra/state/memory-store.js';
import type { StateStore } from '../../../core/model/store/types.js';
import customDomainsPlugin from '../../../plugins/custom-domains/index.js';

/** An app whose workloads set these domains (the plugin reads the names and `http.domain` only). */
function app(name: string, domains: Record<string, string | null>): AppSpec {
  return {
    name,
    workloads: Object.entries(domains).map(([workload, domain]) => ({ name: workload, http: { domain } })),
  } as unknown as AppSpec;
}

interface Fixture {
  readonly store: StateStore;
  readonly host: PluginHost;
  readonly directory: DomainDirectory;
  readonly plans: Map<string, string>;
}

function fixture(
  store: StateStore = createMemoryStateStore(),
  plans = new Map([
    ['acme', 'team'],
    ['beta', 'business'],
    ['tiny', 'free'],
  ]),
): Fixture {
  let directory: DomainDirectory | undefined;
  const plugin = customDomainsPlugin({
    store,
    planOf: async (workspace) => plans.get(workspace) ?? 'free',
    // Nothing answers here: these tests never verify over DNS (see verify.test.ts for the real server).
    dnsResolver: '127.0.0.1:9',
    provide: (d) => (directory = d),
    refreshMs: 0,
  });
  return { store, host: createPluginHost([plugin]), directory: directory!, plans };
}

const deploy = (f: Fixture, workspace: string, spec: AppSpec, dryRun = false) =>
  f.host.sequential('authorizeDeploy', spec, { workspace, stage: 'deployed', principal: null, dryRun });

describe('svc:custom-domains', () => {
  describe('plan gating (authorizeDeploy)', () => {
    it('refuses a deploy with a domain on the free plan with plan_forbids_domain naming the domain, the plan and the plans that allow it, and stores nothing', async () => {
      const f = fixture();
      await assert.rejects(
        deploy(f, 'tiny', app('shop', { api: 'api.shop.test', web: null })),
        (error: Error & { code: string; details: { details: unknown } }) => {
          assert.equal(error.code, 'plan_forbids_domain');
          assert.match(
            error.message,
            /api sets domain="api\.shop\.test", but the workspace "tiny" is on the free plan; custom domains need the team or business plan/,
          );
          assert.deepEqual(error.details.details, {
            domain: 'api.shop.test',
            workspace: 'tiny',
            plan: 'free',
            allowed: ['team', 'business'],
          });
          return true;
        },
      );
      assert.deepEqual(await f.store.keys(''), []);
      assert.deepEqual(await f.directory.list('tiny'), []);
    });

    for (const [workspace, plan] of [
      ['acme', 'team'],
      ['beta', 'business'],
    ] as const) {
      it(`lets a deploy with a domain through on the ${plan} plan, claiming it as pending with a TXT record to publish`, async () => {
        const f = fixture();
        const spec = app('shop', { api: 'API.Shop.test.' });
        assert.equal(await deploy(f, workspace, spec), spec);
        const [view] = await f.directory.list(workspace);
        assert.equal(view?.domain, 'api.shop.test');
        assert.deepEqual(
          [view?.status, view?.app, view?.workload, view?.record.type, view?.record.name],
          ['pending', 'shop', 'api', 'TXT', '_svc-challenge.api.shop.test'],
        );
        assert.match(view!.record.value, /^svc-[0-9a-f]{32}$/);
      });
    }

    it('lets a free workspace deploy apps without domains, and previews and runs with them', async () => {
      const f = fixture();
      await deploy(f, 'tiny', app('plain', { api: null }));
      for (const stage of ['preview', 'run'] as const) {
        await f.host.sequential('authorizeDeploy', app('shop', { api: 'api.shop.test' }), { workspace: 'tiny', stage, principal: null });
      }
      assert.deepEqual(await f.store.keys(''), []);
    });

    it('checks a dry run the same way and claims nothing', async () => {
      const f = fixture();
      await assert.rejects(deploy(f, 'tiny', app('shop', { api: 'api.shop.test' }), true), { code: 'plan_forbids_domain' });
      await deploy(f, 'acme', app('shop', { api: 'api.shop.test' }), true);
      assert.deepEqual(await f.store.keys(''), []);
    });

    it('refuses two workloads asking for the same domain', async () => {
      const f = fixture();
      await assert.rejects(deploy(f, 'acme', app('shop', { a: 'x.shop.test', b: 'X.shop.test' })), {
        code: 'bad_request',
        message: /both set domain="x\.shop\.test"/,
      });
      assert.deepEqual(await f.store.keys(''), []);
    });
  });

  describe('ownership', () => {
    it('gives a name claimed by two workspaces at once to exactly one; the other gets domain_taken', async () => {
      for (let round = 0; round < 20; round++) {
        // Two replicas (two plugin instances) on one store, as on a cluster.
        const store = createMemoryStateStore();
        const [one, two] = [fixture(store), fixture(store)];
        const outcomes = await Promise.allSettled([
          deploy(one, 'acme', app('shop', { api: 'api.race.test' })),
          deploy(two, 'beta', app('blog', { web: 'api.race.test' })),
        ]);
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as { code: string; message: string }] : []));
        assert.equal(won.length, 1, `round ${round}: exactly one wins`);
        assert.equal(lost[0]?.code, 'domain_taken');
        assert.match(lost[0]!.message, /the domain "api\.race\.test" belongs to another workspace/);
        const owners = [...(await one.directory.list('acme')), ...(await one.directory.list('beta'))].map((d) => d.workspace);
        assert.equal(owners.length, 1);
      }
    });

    it("releases the names a refused deploy claimed, and keeps the other workspace's", async () => {
      const f = fixture();
      await deploy(f, 'beta', app('blog', { web: 'taken.test' }));
      await assert.rejects(deploy(f, 'acme', app('shop', { a: 'free.test', b: 'taken.test' })), { code: 'domain_taken' });
      assert.deepEqual(await f.directory.list('acme'), []);
      assert.deepEqual(
        (await f.directory.list('beta')).map((d) => d.domain),
        ['taken.test'],
      );
    });

    it('lets the owning workspace deploy again and move the name to another workload, keeping its token', async () => {
      const f = fixture();
      await deploy(f, 'acme', app('shop', { api: 'api.shop.test' }));
      const [before] = await f.directory.list('acme');
      await deploy(f, 'acme', app('shop', { api: 'api.shop.test' }));
      await deploy(f, 'acme', app('shop2', { web: 'api.shop.test' }));
      const [after] = await f.directory.list('acme');
      assert.deepEqual([after?.app, after?.workload, after?.record.value], ['shop2', 'web', before?.record.value]);
    });

    it("answers not_found when a workspace verifies a name it has not claimed, another workspace's included", async () => {
      const f = fixture();
      await deploy(f, 'beta', app('blog', { web: 'blog.test' }));
      for (const domain of ['blog.test', 'nobody.test']) {
        await assert.rejects(f.directory.verify('acme', domain), {
          code: 'not_found',
          message: `the workspace has not claimed the domain "${domain}"`,
        });
      }
    });
  });

  describe('routing (resolveRoute) and plan changes', () => {
    const resolve = (f: Fixture, host: string) => f.host.first('resolveRoute', { host, path: '/anything' });

    it('knows nothing of unclaimed hosts and serves no pending name', async () => {
      const f = fixture();
      await deploy(f, 'acme', app('shop', { api: 'api.shop.test' }));
      assert.equal(await resolve(f, 'unclaimed.test'), null);
      assert.deepEqual(await resolve(f, 'api.shop.test'), {
        served: false,
        reason: 'publish the TXT record _svc-challenge.api.shop.test, then run svc domain verify api.shop.test',
      });
    });

    it('serves a verified name, suspends it on a downgrade (claim kept, status visible) and serves it again on an upgrade', async () => {
      const f = fixture();
      await deploy(f, 'acme', app('shop', { api: 'api.shop.test' }));
      // Verified as a DNS lookup would mark it (the lookup itself: verify.test.ts).
      const key = 'domains/api.shop.test';
      const stored = JSON.parse((await f.store.get(key))!.value.toString());
      await f.store.put(key, JSON.stringify({ ...stored, verifiedAt: new Date().toISOString() }));
      assert.deepEqual(await resolve(f, 'api.shop.test'), { served: true, workspace: 'acme', app: 'shop', workload: 'api' });

      const event = (plan: string, previous: string) => ({
        type: 'workspace.plan_changed' as const,
        workspace: 'acme',
        plan,
        previous,
        by: 'acc_op',
        at: new Date().toISOString(),
      });
      await f.host.parallel('onEvent', event('free', 'team'));
      assert.deepEqual(await resolve(f, 'api.shop.test'), {
        served: false,
        reason: "the workspace's plan does not include custom domains",
      });
      const [suspended] = await f.directory.list('acme');
      assert.equal(suspended?.status, 'suspended');
      // Nobody else can take it meanwhile.
      await assert.rejects(deploy(f, 'beta', app('blog', { web: 'api.shop.test' })), { code: 'domain_taken' });

      await f.host.parallel('onEvent', event('business', 'free'));
      assert.deepEqual(await resolve(f, 'api.shop.test'), { served: true, workspace: 'acme', app: 'shop', workload: 'api' });
      assert.equal((await f.directory.list('acme'))[0]?.status, 'verified');
    });
  });
});

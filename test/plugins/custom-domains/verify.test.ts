import assert from 'node:assert/strict';
import type { DomainDirectory } from '../../../core/model/domains/types.js';
import { createPluginHost } from '../../../core/infra/plugin/host.js';
import { createMemoryStateStore } from '../../../core/infra/state/memory-store.js';
import type { AppSpec } from '../../../core/model/workload/types.js';
import customDomainsPlugin from '../../../plugins/custom-domains/index.js';
import { requireDnsmasq, startDnsmasq, type Dnsmasq } from '../../helpers/dnsmasq.js';

describe('svc:custom-domains verification against a real DNS server (dnsmasq on loopback)', function () {
  this.timeout(30_000);
  let dns: Dnsmasq | undefined;
  before(async function () {
    requireDnsmasq(this);
    dns = await startDnsmasq();
  });
  after(async () => dns?.stop());

  it('keeps a domain pending until its TXT record holds the token, then serves it', async () => {
    let directory: DomainDirectory | undefined;
    const plugin = customDomainsPlugin({
      store: createMemoryStateStore(),
      planOf: async () => 'team',
      dnsResolver: dns!.address,
      provide: (d) => (directory = d),
    });
    const host = createPluginHost([plugin]);
    const spec = { name: 'shop', workloads: [{ name: 'api', http: { domain: 'api.example.test' } }] } as unknown as AppSpec;
    await host.sequential('authorizeDeploy', spec, { workspace: 'acme', stage: 'deployed', principal: null });
    const [claimed] = await directory!.list('acme');

    // No record at all.
    const none = await directory!.verify('acme', 'api.example.test');
    assert.equal(none.status, 'pending');
    assert.match(
      none.reason!,
      /no TXT record _svc-challenge\.api\.example\.test was found; publish _svc-challenge\.api\.example\.test TXT "svc-[0-9a-f]+" and verify again/,
    );
    assert.deepEqual(await host.first('resolveRoute', { host: 'api.example.test', path: '/' }), { served: false, reason: claimed!.reason });

    // A record with another value (someone else's token, a typo).
    await dns!.publish({ '_svc-challenge.api.example.test': 'svc-not-the-token' });
    const wrong = await directory!.verify('acme', 'api.example.test');
    assert.equal(wrong.status, 'pending');
    assert.match(wrong.reason!, /holds "svc-not-the-token", not the token/);

    // The record svc showed.
    await dns!.publish({ '_svc-challenge.api.example.test': claimed!.record.value });
    const verified = await directory!.verify('acme', 'API.example.test');
    assert.equal(verified.status, 'verified');
    assert.ok(verified.verifiedAt !== null);
    assert.deepEqual(await host.first('resolveRoute', { host: 'api.example.test', path: '/x' }), {
      served: true,
      workspace: 'acme',
      app: 'shop',
      workload: 'api',
    });

    // Proved once: a record taken down later does not unserve it.
    await dns!.publish({});
    assert.equal((await directory!.verify('acme', 'api.example.test')).status, 'verified');
  });

  it('says which server failed when the resolver does not answer', async () => {
    let directory: DomainDirectory | undefined;
    const plugin = customDomainsPlugin({
      store: createMemoryStateStore(),
      planOf: async () => 'team',
      dnsResolver: '127.0.0.1:9',
      provide: (d) => (directory = d),
    });
    const host = createPluginHost([plugin]);
    await host.sequential(
      'authorizeDeploy',
      { name: 'shop', workloads: [{ name: 'api', http: { domain: 'quiet.test' } }] } as unknown as AppSpec,
      { workspace: 'acme', stage: 'deployed', principal: null },
    );
    const view = await directory!.verify('acme', 'quiet.test');
    assert.equal(view.status, 'pending');
    assert.match(view.reason!, /the DNS lookup of _svc-challenge\.quiet\.test failed \(\w+ at 127\.0\.0\.1:9\)/);
  });
});

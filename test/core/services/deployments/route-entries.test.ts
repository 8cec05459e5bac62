import assert from 'node:assert/strict';
import type { DeploymentRef } from '../../../../core/model/deployment-keys.js';
import { hostTakenWarnings, routeEntriesFor } from '../../../../core/services/deployments/route-entries.js';
import { RouteTable } from '../../../../core/traffic/gateway/route-table.js';
import { endpoint } from '../../traffic/gateway/harness.js';

const ref: DeploymentRef = { workspace: 'default', app: 'shop', stage: 'deployed' };

describe('routeEntriesFor()', () => {
  it('gives path prefixes only without a base domain', () => {
    const { entries, warnings } = routeEntriesFor(ref, [endpoint({ name: 'cart' })], null);
    assert.deepEqual(
      entries.map((e) => [e.unit, e.prefix, e.host]),
      [['default/shop/deployed/cart', '/default/shop/cart', undefined]],
    );
    assert.deepEqual(warnings, []);
  });

  it('adds host names under the base domain, and says which workload gets none and why', () => {
    const { entries, warnings } = routeEntriesFor(ref, [endpoint({ name: 'Cart_Items' }), endpoint({ name: 'broken_' })], 'svc.test');
    assert.deepEqual(
      entries.map((e) => e.host ?? null),
      ['shop-cart-items.svc.test', null],
    );
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /^broken_: no host-based URL: its host name shop-broken-\.svc\.test is not a valid DNS label .*; use its path URL$/,
    );
  });

  it('turns host names held by another workload into warnings naming the holder', () => {
    const table = new RouteTable();
    table.add(routeEntriesFor({ ...ref, app: 'a-b' }, [endpoint({ name: 'c' })], 'svc.test').entries);
    const taken = table.add(routeEntriesFor({ ...ref, app: 'a' }, [endpoint({ name: 'b-c' })], 'svc.test').entries);
    assert.deepEqual(hostTakenWarnings(taken), [
      'b-c: no host-based URL: a-b-c.svc.test is already served by default/a-b/deployed/c; use its path URL',
    ]);
  });
});

import assert from 'node:assert/strict';
import { RouteTable, type FollowedRoute } from '../../../../core/traffic/gateway/route-table.js';
import type { RouteEntry } from '../../../../core/traffic/gateway/types.js';
import { endpoint, routeEntry } from './harness.js';

const entry = (prefix: string, unit: string, host?: string): RouteEntry => ({
  ...routeEntry(endpoint(), unit, prefix),
  ...(host ? { host } : {}),
});
const followed = (prefix: string, unit: string, host?: string, servesHost = host !== undefined): FollowedRoute => ({
  entry: entry(prefix, unit, host),
  servesHost,
});

describe('RouteTable: followed entries', () => {
  it('serves followed entries by path and by host, and lists them with the own ones', () => {
    const table = new RouteTable();
    table.add([entry('/ws/own/w', 'own')]);
    table.follow([followed('/ws/a/w', 'leader-a', 'a-w.svc.test'), followed('/ws/b/w', 'leader-b')]);
    assert.equal(table.match('/ws/a/w/x')?.entry.unit, 'leader-a');
    assert.equal(table.match('/x', 'a-w.svc.test')?.entry.unit, 'leader-a');
    assert.equal(table.match('/ws/b/w')?.entry.unit, 'leader-b');
    assert.deepEqual(
      table
        .entries()
        .map((e) => e.unit)
        .sort(),
      ['leader-a', 'leader-b', 'own'],
    );
    assert.equal(table.hostOf('leader-a'), 'a-w.svc.test');
  });

  it('does not serve a host the leader does not serve; the path still works', () => {
    const table = new RouteTable();
    table.follow([followed('/ws/a/b-c', 'u2', 'a-b-c.svc.test', false)]);
    assert.equal(table.match('/', 'a-b-c.svc.test'), null);
    assert.equal(table.match('/ws/a/b-c')?.entry.unit, 'u2');
    assert.equal(table.hostOf('u2'), null);
  });

  it('replaces every followed entry at once, and dropFollowed() removes them only', () => {
    const table = new RouteTable();
    table.add([entry('/ws/own/w', 'own', 'own-w.svc.test')]);
    table.follow([followed('/ws/a/w', 'ua', 'a-w.svc.test'), followed('/ws/b/w', 'ub')]);
    table.follow([followed('/ws/b/w', 'ub2'), followed('/ws/c/w', 'uc')]);
    assert.equal(table.match('/ws/a/w'), null);
    assert.equal(table.match('/', 'a-w.svc.test'), null);
    assert.equal(table.match('/ws/b/w')?.entry.unit, 'ub2');
    assert.equal(table.match('/ws/c/w')?.entry.unit, 'uc');
    table.dropFollowed();
    assert.deepEqual(
      table.entries().map((e) => e.unit),
      ['own'],
    );
    assert.equal(table.match('/', 'own-w.svc.test')?.entry.unit, 'own');
  });

  it('lets own entries win: a followed entry on an own prefix or an own host is skipped whole', () => {
    const table = new RouteTable();
    table.add([entry('/ws/a/w', 'own-a'), entry('/ws/h/w', 'own-h', 'h.svc.test')]);
    table.follow([
      followed('/ws/a/w', 'leader-a'),
      followed('/ws/x/w', 'leader-x', 'h.svc.test'),
      followed('/ws/y/w', 'leader-y', 'h.svc.test', false),
    ]);
    assert.equal(table.match('/ws/a/w')?.entry.unit, 'own-a');
    assert.equal(table.match('/', 'h.svc.test')?.entry.unit, 'own-h');
    assert.equal(table.match('/ws/x/w'), null);
    // It does not serve the host anyway, so its path URL is served.
    assert.equal(table.match('/ws/y/w')?.entry.unit, 'leader-y');
  });

  it('add() evicts a followed entry holding the prefix or the host instead of refusing', () => {
    const table = new RouteTable();
    table.follow([followed('/ws/a/w', 'leader-a', 'a-w.svc.test'), followed('/ws/b/w', 'leader-b', 'b-w.svc.test')]);
    table.assertFree([entry('/ws/a/w', 'own-a')]);
    assert.deepEqual(table.add([entry('/ws/a/w', 'own-a')]), []);
    assert.equal(table.match('/ws/a/w')?.entry.unit, 'own-a');
    assert.equal(table.match('/', 'a-w.svc.test'), null, 'the evicted entry leaves its host too');

    assert.deepEqual(table.add([entry('/ws/c/w', 'own-c', 'b-w.svc.test')]), []);
    assert.equal(table.match('/', 'b-w.svc.test')?.entry.unit, 'own-c');
    assert.equal(table.match('/ws/b/w'), null, 'the evicted entry leaves its prefix too');
    assert.deepEqual(
      table
        .entries()
        .map((e) => e.unit)
        .sort(),
      ['own-a', 'own-c'],
    );

    // Evicted followed entries are gone for good: removing the own unit does not bring them back.
    table.removeUnit('own-a');
    assert.equal(table.match('/ws/a/w'), null);
  });

  it('removeUnit() leaves followed entries of the same unit key alone', () => {
    const table = new RouteTable();
    table.add([entry('/ws/own/w', 'u1')]);
    table.follow([followed('/ws/a/w', 'u1', 'a-w.svc.test')]);
    table.removeUnit('u1');
    assert.deepEqual(
      table.entries().map((e) => e.prefix),
      ['/ws/a/w'],
    );
    assert.equal(table.match('/', 'a-w.svc.test')?.entry.unit, 'u1');
  });

  it('published() lists the own entries only, with whether each serves its host', () => {
    const table = new RouteTable();
    table.add([entry('/ws/a/x', 'u1', 'x.svc.test'), entry('/ws/b/x', 'u2', 'x.svc.test'), entry('/ws/c/x', 'u3')]);
    table.follow([followed('/ws/d/x', 'leader', 'd.svc.test')]);
    assert.deepEqual(
      table.published().map((r) => [r.entry.unit, r.servesHost]),
      [
        ['u1', true],
        ['u2', false],
        ['u3', false],
      ],
    );
  });

  it('onChange() fires after add() and removeUnit() of own entries, never for follow() or dropFollowed()', () => {
    const table = new RouteTable();
    let calls = 0;
    const unsubscribe = table.onChange(() => calls++);
    table.follow([followed('/ws/a/w', 'leader')]);
    table.dropFollowed();
    table.removeUnit('leader');
    assert.equal(calls, 0);
    table.add([entry('/ws/a/w', 'u1')]);
    assert.equal(calls, 1);
    table.removeUnit('nobody');
    assert.equal(calls, 1);
    table.removeUnit('u1');
    assert.equal(calls, 2);
    unsubscribe();
    table.add([entry('/ws/a/w', 'u1')]);
    assert.equal(calls, 2);
  });
});

import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { RouteTable, routeMatches } from '../../../../core/traffic/gateway/route-table.js';
import { endpoint, routeEntry } from './harness.js';

const entry = (prefix: string, unit = `unit:${prefix}`) => routeEntry(endpoint(), unit, prefix);
const isConflict = (error: unknown) => error instanceof SvcError && error.code === 'conflict' && /already used by/.test(error.message);

describe('RouteTable#match()', () => {
  const table = new RouteTable();
  table.add([entry('/ws/app/w'), entry('/ws/app--preview/w')]);

  it('matches on exactly the first three segments and hands the rest to the container', () => {
    assert.equal(table.match('/ws/app/w')?.rest, '/');
    assert.equal(table.match('/ws/app/w/')?.rest, '/');
    assert.equal(table.match('/ws/app/w/greet')?.rest, '/greet');
    assert.equal(table.match('/ws/app/w/a/b/c')?.rest, '/a/b/c');
    assert.equal(table.match('/ws/app/w/greet/')?.rest, '/greet/');
  });

  it('tells the preview and the deployment apart', () => {
    assert.equal(table.match('/ws/app--preview/w/x')?.entry.prefix, '/ws/app--preview/w');
    assert.equal(table.match('/ws/app/w/x')?.entry.prefix, '/ws/app/w');
  });

  it('finds nothing for fewer segments, other names or a longer first segment', () => {
    for (const path of [
      '',
      '/',
      '/ws',
      '/ws/',
      '/ws/app',
      '/ws/app/',
      '/ws/app/other',
      '/ws/app/wx',
      '/ws/app/w2/x',
      '/wsx/app/w',
      'ws/app/w',
      '//ws/app/w',
    ]) {
      assert.equal(table.match(path), null, path);
    }
  });

  it('treats an empty segment as a segment (no collapsing of slashes)', () => {
    assert.equal(table.match('/ws//app/w'), null);
  });
});

describe('RouteTable#add() and #removeUnit()', () => {
  it('adds and lists entries, and removes every route of one unit only', () => {
    const table = new RouteTable();
    table.add([entry('/ws/a/x', 'u1'), entry('/ws/a/y', 'u1'), entry('/ws/b/x', 'u2')]);
    assert.equal(table.entries().length, 3);
    table.removeUnit('u1');
    assert.deepEqual(
      table.entries().map((e) => e.prefix),
      ['/ws/b/x'],
    );
    table.removeUnit('unknown');
    assert.equal(table.entries().length, 1);
  });

  it('lets a unit re-add its own prefix (a redeploy)', () => {
    const table = new RouteTable();
    table.add([entry('/ws/a/x', 'u1')]);
    table.add([entry('/ws/a/x', 'u1')]);
    assert.equal(table.entries().length, 1);
  });

  it('refuses a prefix of another unit, and adds none of the batch', () => {
    const table = new RouteTable();
    table.add([entry('/ws/a/x', 'u1')]);
    assert.throws(() => table.add([entry('/ws/a/y', 'u2'), entry('/ws/a/x', 'u2')]), isConflict);
    assert.deepEqual(
      table.entries().map((e) => e.unit),
      ['u1'],
    );
    assert.equal(table.match('/ws/a/y'), null);
  });
});

describe('RouteTable#assertFree()', () => {
  it('throws conflict for a prefix of another unit without adding anything', () => {
    const table = new RouteTable();
    table.add([entry('/ws/a/x', 'u1')]);
    assert.throws(() => table.assertFree([entry('/ws/a/x', 'u2')]), isConflict);
    table.assertFree([entry('/ws/a/x', 'u1'), entry('/ws/a/z', 'u3')]);
    assert.equal(table.entries().length, 1);
  });
});

describe('RouteTable: host-based URLs', () => {
  const hosted = (prefix: string, host: string, unit = `unit:${prefix}`) => ({ ...entry(prefix, unit), host });

  it('routes by Host header (any case, with or without port or final dot) and hands the whole path to the container', () => {
    const table = new RouteTable();
    table.add([hosted('/ws/app/w', 'app-w.svc.test')]);
    for (const header of ['app-w.svc.test', 'App-W.SVC.test:7420', 'app-w.svc.test.', 'app-w.svc.test.:80']) {
      const match = table.match('/greet/x', header);
      assert.equal(match?.entry.prefix, '/ws/app/w', header);
      assert.equal(match?.rest, '/greet/x');
      assert.equal(match?.prefix, '');
    }
    assert.equal(table.match('/', 'app-w.svc.test')?.rest, '/');
  });

  it('falls back to the path for other hosts, and the path match reports its prefix', () => {
    const table = new RouteTable();
    table.add([hosted('/ws/app/w', 'app-w.svc.test')]);
    assert.equal(table.match('/ws/app/w/greet', 'svc.test')?.prefix, '/ws/app/w');
    assert.equal(table.match('/ws/app/w/greet', '127.0.0.1:7420')?.rest, '/greet');
    assert.equal(table.match('/ws/app/w/greet', '[::1]:7420')?.rest, '/greet');
    assert.equal(table.match('/greet', 'other-w.svc.test'), null);
    assert.equal(table.match('/greet', 'app-w.svc.test.evil'), null);
  });

  it('keeps a host with the unit that holds it and reports the refusal; the newcomer keeps its path URL', () => {
    const table = new RouteTable();
    assert.deepEqual(table.add([hosted('/ws/a-b/c', 'a-b-c.svc.test', 'u1')]), []);
    const taken = table.add([hosted('/ws/a/b-c', 'a-b-c.svc.test', 'u2')]);
    assert.deepEqual(
      taken.map((t) => [t.host, t.heldBy, t.entry.unit]),
      [['a-b-c.svc.test', 'u1', 'u2']],
    );
    assert.equal(table.match('/', 'a-b-c.svc.test')?.entry.unit, 'u1');
    assert.equal(table.match('/ws/a/b-c', 'localhost')?.entry.unit, 'u2');
    assert.equal(table.hostOf('u1'), 'a-b-c.svc.test');
    assert.equal(table.hostOf('u2'), null);
  });

  it('frees the host when its unit is removed, and a redeploy of the same unit keeps it', () => {
    const table = new RouteTable();
    table.add([hosted('/ws/a/x', 'a-x.svc.test', 'u1')]);
    assert.deepEqual(table.add([hosted('/ws/a/x', 'a-x.svc.test', 'u1')]), []);
    table.removeUnit('u1');
    assert.equal(table.match('/', 'a-x.svc.test'), null);
    assert.deepEqual(table.add([hosted('/ws/b/x', 'a-x.svc.test', 'u2')]), []);
    assert.equal(table.match('/', 'a-x.svc.test')?.entry.unit, 'u2');
  });
});

describe('routeMatches()', () => {
  it('matches the route with or without one trailing slash', () => {
    assert.ok(routeMatches('/greet', '/greet'));
    assert.ok(routeMatches('/greet', '/greet/'));
    assert.ok(!routeMatches('/greet', '/greet//'));
    assert.ok(!routeMatches('/greet', '/greeting'));
    assert.ok(!routeMatches('/greet', '/greet/x'));
    assert.ok(!routeMatches('/greet', '/'));
  });

  it('matches the root route on "/" only', () => {
    assert.ok(routeMatches('/', '/'));
    assert.ok(!routeMatches('/', '/x'));
  });
});

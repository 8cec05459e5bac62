import assert from 'node:assert/strict';
import { age, callDetail, callsCard, mapRow, mapsCard } from '../../../../core/http/dashboard/calls-view.js';
import type { CallView } from '../../../../core/services/calls/types.js';
import type { MapCounts, MapView } from '../../../../core/services/maps/types.js';

const counts = (fields: Partial<MapCounts>): MapCounts => ({
  received: 0,
  queued: 0,
  running: 0,
  succeeded: 0,
  failed: 0,
  cancelled: 0,
  ...fields,
});

const map = (fields: Partial<MapView>): MapView => ({
  id: 'map-0123456789abcdef',
  run: 'run-1',
  function: 'score',
  status: 'running',
  cancelReason: null,
  inputs: counts({ received: 4, queued: 3, running: 1 }),
  lastReceived: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  endedAt: null,
  ...fields,
});

const call = (fields: Partial<CallView>): CallView => ({
  id: 'call-0123456789abcdef0123',
  app: 'shop',
  function: 'score',
  status: 'succeeded',
  attempt: 1,
  maxAttempts: 3,
  createdAt: '2026-01-01T00:00:00.000Z',
  startedAt: '2026-01-01T00:00:01.000Z',
  endedAt: '2026-01-01T00:00:03.500Z',
  durationMs: 2500,
  error: null,
  callback: null,
  ...fields,
});

describe('the Calls page views', () => {
  it('says where a map is: running, cancelled while inputs started before still run, then cancelled or ended', () => {
    assert.deepEqual([mapRow(map({})).state, mapRow(map({})).ended], ['running', false]);
    assert.equal(mapRow(map({ status: 'cancelled' })).state, 'cancelled, finishing');
    assert.deepEqual([mapRow(map({ status: 'cancelled', endedAt: '2026-01-01T00:01:00.000Z' })).state], ['cancelled']);
    const failed = mapRow(
      map({ status: 'succeeded', endedAt: '2026-01-01T00:01:00.000Z', inputs: counts({ received: 2, succeeded: 1, failed: 1 }) }),
    );
    assert.deepEqual([failed.state, failed.tone, failed.ended], ['ended', 'bad', true]);
  });

  it('shows each count of a map in its cell, and asks the page to follow only while a map has not ended', () => {
    const running = String(mapsCard([map({ function: '<img src=x>' })], '/dashboard/apps/shop/maps?csrf=a&b'));
    assert.match(running, /data-live="\/dashboard\/apps\/shop\/maps\?csrf=a&amp;b"/);
    assert.match(running, /<td data-count="running">1<\/td>\s*<td data-count="queued">3<\/td>/);
    assert.match(running, /<td>&lt;img src=x&gt;<\/td>/, 'a function name is text');
    const ended = String(mapsCard([map({ status: 'succeeded', endedAt: '2026-01-01T00:01:00.000Z' })], '/live'));
    assert.doesNotMatch(ended, /data-live/);
    assert.match(String(mapsCard([], '/live')), /No map of this app/);
  });

  it('lists calls with the columns of svc app calls, escaping what a function raised', () => {
    const failed = call({ status: 'failed', error: { code: null, message: 'ValueError: <script>alert(1)</script>\nmore' } });
    const text = String(
      callsCard(
        'shop',
        [failed, call({ id: 'call-ffffffffffffffffffff', durationMs: null })],
        'failed',
        100,
        Date.parse('2026-01-01T00:05:00Z'),
      ),
    );
    assert.match(text, /<a href="\/dashboard\/apps\/shop\/calls\/call-0123456789abcdef0123">/);
    assert.match(text, /<td>ValueError: &lt;script&gt;alert\(1\)&lt;\/script&gt;<\/td>/, 'its first line, as text');
    assert.match(text, /5m<\/time><\/td>\s*<td>2\.5 s<\/td><td>1\/3<\/td>/);
    assert.match(text, /<td>—<\/td><td>1\/3<\/td>/, 'no duration before it ended');
    assert.match(text, /<option value="failed" selected>failed<\/option>/);
    assert.match(String(callsCard('shop', [], 'running', 100, 0)), /No running call of shop is kept/);
  });

  it("shows one call's error with svc's code, its callback attempts and its logs, or says they expired", () => {
    const crashed = call({
      status: 'failed',
      error: { code: 'worker_crashed', message: 'the worker exited' },
      callback: { url: 'https://hooks.example/x?a=<b>', attempts: [{ at: '2026-01-01T00:00:04.000Z', status: 500 }], delivered: false },
    });
    const text = String(callDetail('shop', crashed, { lines: [{ attempt: 1, stream: 'stderr', line: '<oops>' }], dropped: 2 }));
    assert.match(text, /id="call-error">worker_crashed: the worker exited<\/pre>/);
    assert.match(text, /<code>https:\/\/hooks\.example\/x\?a=&lt;b&gt;<\/code>: not delivered/);
    assert.match(text, /2026-01-01 00:00:04 UTC: HTTP 500/);
    assert.match(text, /2 earlier lines are left out/);
    assert.match(text, /#1 stderr: &lt;oops&gt;/);
    assert.match(String(callDetail('shop', call({ result: { total: 3 } }), null)), /&quot;total&quot;: 3[\s\S]*went with its outcome/);
  });

  it('says an age in its largest unit', () => {
    const now = Date.parse('2026-01-03T00:00:00Z');
    assert.deepEqual(
      ['2026-01-02T23:59:18Z', '2026-01-02T23:55:00Z', '2026-01-02T21:00:00Z', '2026-01-01T00:00:00Z'].map((iso) => age(iso, now)),
      ['42s', '5m', '3h', '2d'],
    );
  });
});

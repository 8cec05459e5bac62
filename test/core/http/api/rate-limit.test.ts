import assert from 'node:assert/strict';
import { RateLimiter } from '../../../../core/http/api/rate-limit.js';
import { startApiPlatform, type ApiFixture } from './platform.js';

describe('RateLimiter', () => {
  it('allows a burst, then one request per refill interval, and says how long to wait', () => {
    let now = 0;
    const limiter = new RateLimiter({ burst: 3, perMinute: 6 }, () => now); // one token every 10 s
    assert.deepEqual([limiter.take('a'), limiter.take('a'), limiter.take('a')], [0, 0, 0]);
    assert.equal(limiter.take('a'), 10);
    now = 4_000;
    assert.equal(limiter.take('a'), 6, 'refills continuously: 4 s of the 10 s are done');
    now = 10_000;
    assert.equal(limiter.take('a'), 0);
    assert.equal(limiter.take('b'), 0, 'each client has its own bucket');
  });

  it('never holds more than the burst, however long the client was quiet', () => {
    let now = 0;
    const limiter = new RateLimiter({ burst: 2, perMinute: 60 }, () => now);
    limiter.take('a');
    now = 3_600_000;
    assert.deepEqual([limiter.take('a'), limiter.take('a'), limiter.take('a')], [0, 0, 1]);
  });
});

describe('API rate limits over HTTP', () => {
  let f: ApiFixture;
  before(async () => (f = await startApiPlatform()));
  after(async () => f?.platform.close());

  it("answers 429 rate_limited with Retry-After once one address passes a public route's burst, in svc's error shape", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await f.call('POST', '/api/v1/sign-in', { json: { secret: 'x'.repeat(43) } })).status);
    assert.deepEqual(new Set(statuses.slice(0, 30)), new Set([401]), 'the first 30 are judged on their merits');
    assert.equal(statuses[30], 429);
    const limited = await f.call('POST', '/api/v1/sign-in', { json: { secret: 'x' } });
    assert.equal((limited.json as { error: { code: string } }).error.code, 'rate_limited');
    assert.match(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    // Routes that need a token have no such limit, and other public routes count on their own.
    assert.equal((await f.call('POST', '/api/v1/device/code', { json: { client_name: 'cli' } })).status, 200);
  });
});

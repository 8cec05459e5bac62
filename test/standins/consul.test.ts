/**
 * The Consul stand-in over real HTTP: each behaviour it copies from Consul
 * (test/standins/README.md) has a
 * test here.
 */
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualTimers } from '../helpers/manual-timers.js';
import { startConsulStandin, type ConsulStandin } from './consul/index.js';

interface Answer {
  status: number;
  index: number | null;
  type: string;
  text: string;
  json(): unknown;
}

describe('Consul stand-in', () => {
  let consul: ConsulStandin;
  // Session TTLs run on these: a test expires a session by moving them, not by waiting 20 s.
  let timers: ManualTimers;
  beforeEach(async () => {
    timers = new ManualTimers();
    consul = await startConsulStandin({ jitter: false, sessionTimers: timers });
  });
  afterEach(async () => {
    await consul.close();
  });

  async function call(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(`${consul.url}${path}`, { method, body, headers, redirect: 'manual' });
    const text = await response.text();
    const raw = response.headers.get('x-consul-index');
    return {
      status: response.status,
      index: raw === null ? null : Number(raw),
      type: response.headers.get('content-type') ?? '',
      text,
      json: () => JSON.parse(text),
    };
  }

  const put = (path: string, body?: string | Buffer) => call('PUT', path, body);
  const get = (path: string) => call('GET', path);

  describe('KV', () => {
    it('stores raw bytes and answers base64 Values with CreateIndex, ModifyIndex, LockIndex and Flags', async () => {
      assert.equal((await put('/v1/kv/a/b?flags=42', Buffer.from([0, 255, 1]))).text, 'true');
      const answer = await get('/v1/kv/a/b');
      assert.equal(answer.status, 200);
      assert.match(answer.type, /application\/json/);
      const [entry] = answer.json() as Record<string, unknown>[];
      assert.deepEqual(
        { ...entry, CreateIndex: 0, ModifyIndex: 0 },
        { LockIndex: 0, Key: 'a/b', Flags: 42, Value: Buffer.from([0, 255, 1]).toString('base64'), CreateIndex: 0, ModifyIndex: 0 },
      );
      assert.equal(entry?.CreateIndex, entry?.ModifyIndex);
      assert.equal(answer.index, entry?.ModifyIndex);
    });

    it('answers an empty value as null, and ?raw with the bytes as text/plain', async () => {
      await put('/v1/kv/empty', '');
      assert.equal(((await get('/v1/kv/empty')).json() as { Value: unknown }[])[0]?.Value, null);
      await put('/v1/kv/text', 'hello');
      const raw = await get('/v1/kv/text?raw');
      assert.equal(raw.text, 'hello');
      assert.equal(raw.type, 'text/plain');
    });

    it('answers a missing key with 404, an empty body and X-Consul-Index', async () => {
      const answer = await get('/v1/kv/missing');
      assert.equal(answer.status, 404);
      assert.equal(answer.text, '');
      assert.ok(answer.index !== null && answer.index >= 1);
    });

    it('percent-decodes the key in the path', async () => {
      await put('/v1/kv/a%2Fb', 'x');
      assert.equal(((await get('/v1/kv/a/b')).json() as { Key: string }[])[0]?.Key, 'a/b');
    });

    it('lists by string prefix with ?recurse, sorted, and 404 when nothing matches', async () => {
      for (const key of ['app', 'apps/b', 'apps/a', 'b']) await put(`/v1/kv/${key}`, key);
      assert.deepEqual(
        ((await get('/v1/kv/app?recurse')).json() as { Key: string }[]).map((e) => e.Key),
        ['app', 'apps/a', 'apps/b'],
      );
      assert.equal((await get('/v1/kv/none/?recurse')).status, 404);
    });

    it('lists keys with ?keys, folded with ?separator, [] for an empty root and 404 for an empty prefix', async () => {
      assert.deepEqual((await get('/v1/kv/?keys')).json(), []);
      assert.equal((await get('/v1/kv/x/?keys')).status, 404);
      for (const key of ['apps/a/x', 'apps/a/y', 'apps/b']) await put(`/v1/kv/${key}`, '1');
      assert.deepEqual((await get('/v1/kv/apps/?keys')).json(), ['apps/a/x', 'apps/a/y', 'apps/b']);
      assert.deepEqual((await get('/v1/kv/apps/?keys&separator=/')).json(), ['apps/a/', 'apps/b']);
    });

    it('compares and sets: cas=0 creates only, cas=N writes only at ModifyIndex N', async () => {
      assert.equal((await put('/v1/kv/k?cas=0', 'one')).text, 'true');
      assert.equal((await put('/v1/kv/k?cas=0', 'two')).text, 'false');
      const [entry] = (await get('/v1/kv/k')).json() as { ModifyIndex: number }[];
      assert.equal((await put(`/v1/kv/k?cas=${entry!.ModifyIndex + 100}`, 'x')).text, 'false');
      assert.equal((await put(`/v1/kv/k?cas=${entry!.ModifyIndex}`, 'two')).text, 'true');
      assert.equal((await put('/v1/kv/absent?cas=5', 'x')).text, 'false');
    });

    it('deletes a key (true even when absent), with ?cas, and a tree with ?recurse', async () => {
      await put('/v1/kv/t/a', '1');
      await put('/v1/kv/t/b', '1');
      const [entry] = (await get('/v1/kv/t/a')).json() as { ModifyIndex: number }[];
      assert.equal((await call('DELETE', `/v1/kv/t/a?cas=${entry!.ModifyIndex + 1}`)).text, 'false');
      assert.equal((await call('DELETE', `/v1/kv/t/a?cas=${entry!.ModifyIndex}`)).text, 'true');
      assert.equal((await call('DELETE', '/v1/kv/t/a?cas=7')).text, 'true');
      assert.equal((await call('DELETE', '/v1/kv/t/zzz')).text, 'true');
      assert.equal((await call('DELETE', '/v1/kv/t/?recurse')).text, 'true');
      assert.equal((await get('/v1/kv/t/?recurse')).status, 404);
    });

    it('raises the prefix index on deletes (tombstones), and lowers it when tombstones are reaped', async () => {
      await put('/v1/kv/p/a', '1');
      await put('/v1/kv/p/b', '1');
      const before = (await get('/v1/kv/p/?recurse')).index!;
      await call('DELETE', '/v1/kv/p/b');
      const afterDelete = (await get('/v1/kv/p/?recurse')).index!;
      assert.ok(afterDelete > before);
      consul.reapTombstones();
      assert.equal((await get('/v1/kv/p/?recurse')).index, ((await get('/v1/kv/p/a')).json() as { ModifyIndex: number }[])[0]?.ModifyIndex);
    });

    it('refuses conflicting flags, a missing key, bad numbers, big values and keys Consul rejects', async () => {
      const conflict = await put('/v1/kv/k?cas=0&acquire=x', 'v');
      assert.equal(conflict.status, 400);
      assert.equal(conflict.text, 'Conflicting flags: acquire=x&cas=0\n', 'the query as Go encodes it, sorted by key');
      assert.match(conflict.type, /text\/plain/);
      assert.equal((await call('DELETE', '/v1/kv/k?recurse&cas=1')).status, 400);
      assert.deepEqual([(await put('/v1/kv/', 'v')).status, (await put('/v1/kv/', 'v')).text], [400, 'Missing key name']);
      assert.equal((await get('/v1/kv/')).status, 400);
      const bad = await put('/v1/kv/k?cas=x', 'v');
      assert.deepEqual([bad.status, bad.text], [500, 'strconv.ParseUint: parsing "x": invalid syntax']);
      assert.equal((await put('/v1/kv/big', Buffer.alloc(512 * 1024 + 1))).status, 413);
      assert.equal((await put('/v1/kv/ok', Buffer.alloc(512 * 1024))).status, 200);
      const space = await put('/v1/kv/a%20b', 'v');
      assert.equal(space.status, 400);
      assert.match(space.text, /invalid character ' '/);
      assert.match((await put('/v1/kv/config.json', 'v')).text, /suspicious file extension '\.json'/);
      assert.equal((await call('POST', '/v1/kv/k', 'v')).status, 405);
    });

    it("redirects an unclean path (//, /./, /../ as sent) with 307 like Go's ServeMux, but takes percent-encoded dots as key text", async () => {
      // node:http sends the path as written (fetch would resolve the dot segments first).
      const sent = (path: string) =>
        new Promise<{ status?: number; location?: string; text: string }>((resolve, reject) => {
          const { hostname, port } = new URL(consul.url);
          request({ hostname, port, path, method: 'PUT' }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode, location: response.headers.location, text: Buffer.concat(chunks).toString() }),
            );
          })
            .on('error', reject)
            .end('v');
        });
      for (const path of ['/v1/kv/a//b', '/v1/kv/a/./b', '/v1/kv/a/x/../b?cas=0']) {
        assert.deepEqual(
          await sent(path),
          { status: 307, location: path.startsWith('/v1/kv/a/x') ? '/v1/kv/a/b?cas=0' : '/v1/kv/a/b', text: '' },
          path,
        );
      }
      // Not resolved as a dot segment (WHATWG URL parsing would): the key keeps it, and the key rule refuses it.
      assert.deepEqual(await sent('/v1/kv/a/%2E%2E/b'), { status: 400, location: undefined, text: 'key contains path traversal sequence' });
      assert.equal(consul.state.kv.has('b'), false);
    });

    it("answers a path it has no handler for with Consul's 404 text", async () => {
      for (const path of ['/v1/nothing', '/v1/session/bogus', '/v1/agent/bogus']) {
        const answer = await get(path);
        assert.deepEqual([answer.status, answer.text], [404, 'Invalid URL path: not a recognized HTTP API endpoint\n'], path);
      }
    });
  });

  describe('blocking queries', () => {
    it('answers at once without ?index, and when the index already passed', async () => {
      await put('/v1/kv/w/a', '1');
      const index = (await get('/v1/kv/w/?recurse')).index!;
      assert.equal((await get(`/v1/kv/w/?recurse&index=${index - 1}`)).status, 200);
    });

    it('blocks until a write under the prefix raises its index', async () => {
      await put('/v1/kv/w/a', '1');
      const index = (await get('/v1/kv/w/?recurse')).index!;
      const blocked = get(`/v1/kv/w/?recurse&index=${index}&wait=30s`);
      let done = false;
      void blocked.then(() => {
        done = true;
      });
      await put('/v1/kv/other', 'x');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(done, false, 'a write outside the prefix does not answer it');
      await put('/v1/kv/w/b', '2');
      const answer = await blocked;
      assert.ok(answer.index! > index);
      assert.equal((answer.json() as unknown[]).length, 2);
    });

    it('answers with the unchanged index when the wait ends', async () => {
      await put('/v1/kv/w/a', '1');
      const index = (await get('/v1/kv/w/?recurse')).index!;
      const answer = await get(`/v1/kv/w/?recurse&index=${index}&wait=50ms`);
      assert.equal(answer.index, index);
    });

    it('refuses a bad wait or index with 400', async () => {
      assert.deepEqual(
        [(await get('/v1/kv/k?index=1&wait=soon')).status, (await get('/v1/kv/k?index=1&wait=soon')).text],
        [400, 'Invalid wait time'],
      );
      assert.deepEqual([(await get('/v1/kv/k?index=x')).status, (await get('/v1/kv/k?index=x')).text], [400, 'Invalid index']);
    });

    it('goes backwards after a snapshot restore', async () => {
      await put('/v1/kv/k', '1');
      const snapshot = consul.snapshot();
      const low = (await get('/v1/kv/k')).index!;
      await put('/v1/kv/k', '2');
      assert.ok((await get('/v1/kv/k')).index! > low);
      consul.restore(snapshot);
      assert.equal((await get('/v1/kv/k')).index, low);
    });
  });

  describe('sessions and locks', () => {
    async function session(body: unknown = {}): Promise<string> {
      const answer = await put('/v1/session/create', JSON.stringify(body));
      assert.equal(answer.status, 200, answer.text);
      return (answer.json() as { ID: string }).ID;
    }

    it("creates a session with Consul's defaults and shows it in info", async () => {
      const id = await session({ Name: 'leader' });
      const [info] = (await get(`/v1/session/info/${id}`)).json() as Record<string, unknown>[];
      assert.equal(info?.LockDelay, 15e9);
      assert.equal(info?.Behavior, 'release');
      assert.deepEqual(info?.NodeChecks, ['serfHealth']);
      assert.deepEqual((await get('/v1/session/info/00000000-0000-0000-0000-000000000000')).json(), []);
    });

    it('ignores unknown fields, and refuses a TTL out of range and a bad Behavior (500)', async () => {
      const unknown = await put('/v1/session/create', '{"Nmae": "x"}');
      assert.equal(unknown.status, 200, 'Consul 1.21.4 decodes a session create without DisallowUnknownFields');
      assert.equal((await put('/v1/session/create', '{"TTL": "5s"}')).status, 500);
      assert.match((await put('/v1/session/create', '{"TTL": "5s"}')).text, /^Invalid Session TTL/);
      assert.equal((await put('/v1/session/create', '{"Behavior": "explode"}')).text, "Invalid Behavior setting 'explode'");
    });

    it('acquires a lock once: LockIndex counts acquisitions, another session gets false, release frees it', async () => {
      const a = await session();
      const b = await session();
      assert.equal((await put(`/v1/kv/lock?acquire=${a}`, 'a')).text, 'true');
      assert.equal((await put(`/v1/kv/lock?acquire=${a}`, 'a')).text, 'true');
      assert.equal((await put(`/v1/kv/lock?acquire=${b}`, 'b')).text, 'false');
      let [entry] = (await get('/v1/kv/lock')).json() as { Session?: string; LockIndex: number }[];
      assert.deepEqual([entry?.Session, entry?.LockIndex], [a, 1]);
      assert.equal((await put(`/v1/kv/lock?release=${b}`, '')).text, 'false');
      assert.equal((await put(`/v1/kv/lock?release=${a}`, '')).text, 'true');
      assert.equal((await put(`/v1/kv/lock?acquire=${b}`, 'b')).text, 'true');
      [entry] = (await get('/v1/kv/lock')).json() as { Session?: string; LockIndex: number }[];
      assert.deepEqual([entry?.Session, entry?.LockIndex], [b, 2]);
      const invalid = await put('/v1/kv/lock?acquire=not-a-session', 'x');
      assert.deepEqual(
        [invalid.status, invalid.text],
        [500, 'raft apply failed: invalid session "not-a-session"'],
        "KVS.Apply's error, wrapped by raftApply",
      );
      assert.equal((await put('/v1/kv/lock?acquire=', 'x')).text, 'raft apply failed: missing session');
    });

    it('destroys a session: its locks are released and held off for the lock-delay', async () => {
      const a = await session({ LockDelay: '30s' });
      const b = await session();
      await put(`/v1/kv/lock?acquire=${a}`, 'a');
      assert.equal((await put(`/v1/session/destroy/${a}`)).text, 'true');
      const [entry] = (await get('/v1/kv/lock')).json() as { Session?: string }[];
      assert.equal(entry?.Session, undefined);
      assert.equal((await put(`/v1/kv/lock?acquire=${b}`, 'b')).text, 'false', 'inside the lock-delay');
    });

    it('deletes the held keys of a session with Behavior delete', async () => {
      const a = await session({ Behavior: 'delete', LockDelay: 0 });
      await put(`/v1/kv/eph?acquire=${a}`, 'a');
      await put(`/v1/session/destroy/${a}`);
      assert.equal((await get('/v1/kv/eph')).status, 404);
    });

    it('renews a TTL session, and answers 404 for an unknown one', async () => {
      const id = await session({ TTL: '10s' });
      const renewed = await put(`/v1/session/renew/${id}`);
      assert.equal(renewed.status, 200);
      assert.equal((renewed.json() as { ID: string }[])[0]?.ID, id);
      const missing = await put('/v1/session/renew/nope');
      assert.deepEqual([missing.status, missing.text], [404, "Session id 'nope' not found"]);
    });

    it('invalidates a TTL session that is not renewed (after 2 × TTL), releasing its lock; a renewal starts the 2 × TTL again', async () => {
      const id = await session({ TTL: '10s', LockDelay: 0 });
      await put(`/v1/kv/leader?acquire=${id}`, 'me');
      const holder = async () => ((await get('/v1/kv/leader')).json() as { Session?: string }[])[0]?.Session;
      timers.advance(15_000);
      assert.equal((await put(`/v1/session/renew/${id}`)).status, 200);
      timers.advance(19_999);
      assert.equal(await holder(), id, 'renewed 19.999 s ago: still valid');
      const index = (await get('/v1/kv/leader')).index!;
      const released = get(`/v1/kv/leader?index=${index}&wait=60s`);
      timers.advance(1);
      // The blocking query returns with the key released.
      assert.equal(((await released).json() as { Session?: string }[])[0]?.Session, undefined);
      assert.deepEqual((await get(`/v1/session/info/${id}`)).json(), []);
    });
  });

  describe('agent services and health', () => {
    it('registers a service (ID defaults to Name) and answers health with Node, Service and Checks', async () => {
      assert.equal((await put('/v1/agent/service/register', JSON.stringify({ Name: 'web', Port: 8080, Meta: { a: 'b' } }))).status, 200);
      const answer = await get('/v1/health/service/web');
      const [entry] = answer.json() as {
        Node: { Node: string; Address: string };
        Service: { ID: string; Tags: string[]; Port: number; Meta: object };
        Checks: { CheckID: string; Status: string }[];
      }[];
      assert.equal(entry?.Service.ID, 'web');
      assert.deepEqual(entry?.Service.Tags, []);
      assert.deepEqual(entry?.Service.Meta, { a: 'b' });
      assert.equal(entry?.Node.Address, '127.0.0.1');
      assert.deepEqual(
        entry?.Checks.map((c) => [c.CheckID, c.Status]),
        [['serfHealth', 'passing']],
      );
      assert.ok(answer.index! >= 1);
      assert.deepEqual((await get('/v1/health/service/nothing')).json(), []);
    });

    it('decodes strictly: an unknown field is 400, keys match case-insensitively, snake_case aliases work', async () => {
      const unknown = await put('/v1/agent/service/register', JSON.stringify({ Name: 'web', Prot: 1 }));
      assert.deepEqual([unknown.status, unknown.text], [400, 'Request decode failed: json: unknown field "Prot"']);
      assert.equal(
        (await put('/v1/agent/service/register', JSON.stringify({ name: 'web', port: 1, enable_tag_override: true }))).status,
        200,
      );
    });

    it("refuses a missing name, address 0.0.0.0, bad Meta and bad checks with Consul's messages", async () => {
      assert.equal((await put('/v1/agent/service/register', '{}')).text, 'Missing service name');
      assert.equal(
        (await put('/v1/agent/service/register', JSON.stringify({ Name: 'w', Address: '0.0.0.0' }))).text,
        'Invalid service address',
      );
      assert.match(
        (await put('/v1/agent/service/register', JSON.stringify({ Name: 'w', Meta: { 'a.b': 'x' } }))).text,
        /^Invalid Service Meta: .*Key contains invalid characters/,
      );
      assert.match((await put('/v1/agent/service/register', JSON.stringify({ Name: 'w', Meta: { 'consul-x': 'x' } }))).text, /reserved/);
      assert.equal(
        (await put('/v1/agent/service/register', JSON.stringify({ Name: 'w', Check: { HTTP: 'http://x' } }))).text,
        'Invalid check: Interval must be > 0 for Script, HTTP, H2PING, TCP, UDP or GRPC checks',
      );
      assert.equal(
        (await put('/v1/agent/service/register', JSON.stringify({ Name: 'w', Check: { TTL: '10s', Interval: '10s' } }))).text,
        'Invalid check: Interval and TTL cannot both be specified',
      );
      assert.equal(
        (await put('/v1/agent/service/register', JSON.stringify({ Name: 'w', Check: { Interval: 'soon', HTTP: 'http://x' } }))).status,
        400,
      );
    });

    it('names checks service:<id>[:n], starts them critical, and ?passing drops the instance', async () => {
      await put(
        '/v1/agent/service/register',
        JSON.stringify({ Name: 'web', ID: 'web-1', Checks: [{ TTL: '30s' }, { TTL: '30s', Status: 'passing' }] }),
      );
      const [entry] = (await get('/v1/health/service/web')).json() as { Checks: { CheckID: string; Status: string; Name: string }[] }[];
      assert.deepEqual(
        entry?.Checks.slice(1).map((c) => [c.CheckID, c.Status, c.Name]),
        [
          ['service:web-1:1', 'critical', "Service 'web' check"],
          ['service:web-1:2', 'passing', "Service 'web' check"],
        ],
      );
      assert.deepEqual((await get('/v1/health/service/web?passing')).json(), []);
      assert.equal((await put('/v1/agent/check/pass/service:web-1:1')).status, 200);
      assert.equal(((await get('/v1/health/service/web?passing=true')).json() as unknown[]).length, 1);
      assert.deepEqual(
        [(await get('/v1/health/service/web?passing=maybe')).status, (await get('/v1/health/service/web?passing=maybe')).text],
        [400, 'Invalid value for ?passing'],
      );
      assert.equal((await put('/v1/agent/check/pass/nope')).status, 404);
    });

    it('filters on every ?tag given', async () => {
      await put('/v1/agent/service/register', JSON.stringify({ Name: 'web', ID: 'a', Tags: ['x', 'y'] }));
      await put('/v1/agent/service/register', JSON.stringify({ Name: 'web', ID: 'b', Tags: ['x'] }));
      assert.deepEqual(
        ((await get('/v1/health/service/web?tag=x&tag=y')).json() as { Service: { ID: string } }[]).map((e) => e.Service.ID),
        ['a'],
      );
    });

    it('runs HTTP checks at their interval: 2xx passing, 429 warning, else critical', async () => {
      let status = 200;
      const app = createServer((_req, res) => res.writeHead(status).end('body'));
      await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
      const { port } = app.address() as AddressInfo;
      const checkStatus = async (): Promise<string> =>
        ((await get('/v1/agent/checks')).json() as Record<string, { Status: string }>)['service:web']!.Status;
      const until = async (wanted: string): Promise<void> => {
        for (let i = 0; i < 300 && (await checkStatus()) !== wanted; i++) await new Promise((r) => setTimeout(r, 50));
        assert.equal(await checkStatus(), wanted);
      };
      try {
        await put(
          '/v1/agent/service/register',
          JSON.stringify({ Name: 'web', Port: port, Check: { HTTP: `http://127.0.0.1:${port}/health`, Interval: '1s', Timeout: '1s' } }),
        );
        assert.equal(await checkStatus(), 'critical');
        await until('passing');
        status = 429;
        await until('warning');
        status = 500;
        await until('critical');
      } finally {
        app.closeAllConnections();
        await new Promise<void>((resolve) => app.close(() => resolve()));
      }
    });

    it('blocks health queries until the service changes, and advances the index on deregistration', async () => {
      await put('/v1/agent/service/register', JSON.stringify({ Name: 'web', ID: 'a' }));
      const index = (await get('/v1/health/service/web')).index!;
      const blocked = get(`/v1/health/service/web?index=${index}&wait=30s`);
      await put('/v1/agent/service/register', JSON.stringify({ Name: 'other' }));
      await put('/v1/agent/service/deregister/a');
      const answer = await blocked;
      assert.ok(answer.index! > index);
      assert.deepEqual(answer.json(), []);
    });

    it('deregisters by ID and answers 404 for an unknown ID', async () => {
      await put('/v1/agent/service/register', JSON.stringify({ Name: 'web' }));
      assert.equal((await put('/v1/agent/service/deregister/web')).status, 200);
      const missing = await put('/v1/agent/service/deregister/web');
      assert.deepEqual(
        [missing.status, missing.text],
        [404, 'Unknown service ID "web". Ensure that the service ID is passed, not the service name.'],
      );
      assert.deepEqual((await get('/v1/agent/services')).json(), {});
    });

    it('answers /v1/status/leader', async () => {
      assert.equal((await get('/v1/status/leader')).json(), '127.0.0.1:8300');
    });
  });

  describe('ACL and fault hooks', () => {
    it('needs the token in X-Consul-Token, ?token= or Bearer when ACLs are on: 403 text otherwise', async () => {
      const guarded = await startConsulStandin({ aclToken: 's3cret' });
      const at = (path: string, headers: Record<string, string> = {}) => fetch(`${guarded.url}${path}`, { headers });
      const anonymous = await at('/v1/kv/k');
      assert.equal(anonymous.status, 403);
      assert.equal(anonymous.headers.get('x-consul-default-acl-policy'), 'deny');
      const wrong = await at('/v1/kv/k', { 'X-Consul-Token': 'nope' });
      assert.deepEqual([wrong.status, await wrong.text()], [403, 'ACL not found']);
      assert.equal((await at('/v1/kv/k', { 'X-Consul-Token': 's3cret' })).status, 404);
      assert.equal((await at('/v1/kv/k?token=s3cret')).status, 404);
      assert.equal((await at('/v1/kv/k', { Authorization: 'Bearer s3cret' })).status, 404);
      await guarded.close();
    });

    it('refuses an anonymous call naming one resource with the permission it lacks, and filters anonymous listings to nothing', async () => {
      const guarded = await startConsulStandin({ aclToken: 's3cret' });
      const at = async (method: string, path: string, body?: string): Promise<[number, string]> => {
        const response = await fetch(`${guarded.url}${path}`, { method, body });
        return [response.status, await response.text()];
      };
      const note = '. The anonymous token is used implicitly when a request does not specify a token.';
      await fetch(`${guarded.url}/v1/kv/svc/k`, { method: 'PUT', body: 'v', headers: { 'X-Consul-Token': 's3cret' } });
      assert.deepEqual(await at('GET', '/v1/kv/svc/k'), [
        403,
        `Permission denied: anonymous token lacks permission 'key:read' on "svc/k"${note}`,
      ]);
      assert.deepEqual(await at('PUT', '/v1/kv/svc/k', 'v'), [
        403,
        `Permission denied: anonymous token lacks permission 'key:write' on "svc/k"${note}`,
      ]);
      assert.deepEqual(await at('DELETE', '/v1/kv/svc/?recurse'), [
        403,
        `Permission denied: anonymous token lacks permission 'key:write' on "svc/"${note}`,
      ]);
      assert.deepEqual(await at('GET', '/v1/kv/svc/?recurse'), [404, '']);
      assert.deepEqual(await at('GET', '/v1/kv/svc/?keys'), [404, '']);
      assert.deepEqual(await at('GET', '/v1/kv/?keys'), [200, '[]']);
      assert.deepEqual(await at('GET', '/v1/health/service/web?passing'), [200, '[]']);
      assert.deepEqual(await at('PUT', '/v1/session/create', '{}'), [
        403,
        `Permission denied: anonymous token lacks permission 'session:write' on "standin"${note}`,
      ]);
      assert.deepEqual(await at('PUT', '/v1/session/renew/nope'), [404, "Session id 'nope' not found"]);
      assert.deepEqual(await at('PUT', '/v1/agent/service/register', '{"Name": "web"}'), [
        403,
        `Permission denied: anonymous token lacks permission 'service:write' on "web"${note}`,
      ]);
      await guarded.close();
    });

    it('fails the next matching requests on demand, then answers normally', async () => {
      consul.failNext({ match: /^GET \/v1\/kv\//, count: 2, status: 500 });
      assert.equal((await get('/v1/kv/k')).status, 500);
      assert.equal((await get('/v1/kv/k')).status, 500);
      assert.equal((await get('/v1/kv/k')).status, 404);
    });
  });
});

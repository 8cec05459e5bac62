/**
 * Volumes over the real API of an embedded platform: files in and out byte for byte (streamed, a
 * file of 24 MiB), listings, removal, and every refusal: a path that leaves the volume (`..`,
 * absolute, a symbolic link a container could have made), another workspace's volume (the same
 * 404 as none), an upload past the operator's limits (`volume_full` with the figures, nothing
 * kept), and an upload cut off mid-way, which leaves no file under its name.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';

const OCTETS = { 'Content-Type': 'application/octet-stream' };

describe('volumes on the embedded platform (API)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  const files = (...parts: string[]) => path.join(platform.config.dataDir, 'volumes', 'default', ...parts);

  before(async () => {
    platform = await startPlatform({ config: testConfig({ volumeMaxBytes: 32 * 1024 * 1024, workspaceVolumeBytes: 40 * 1024 * 1024 }) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
  });
  after(() => platform?.close());

  const put = (volume: string, at: string, body: Buffer) =>
    call('PUT', `/api/v1/volumes/${volume}/files?path=${encodeURIComponent(at)}`, { token: owner, body, headers: OCTETS });

  it('creates a volume once, lists it with the bytes it holds, and refuses a second of the same name', async () => {
    const created = await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'models' } });
    assert.equal(created.status, 201);
    assert.deepEqual([created.json.name, created.json.bytes, created.json.maxBytes], ['models', 0, 32 * 1024 * 1024]);
    assert.equal(created.headers.get('location'), '/api/v1/volumes/models');
    const again = await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'models' } });
    assert.equal(again.status, 409);
    assert.equal(again.json.error.code, 'conflict');
    const bad = await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'Not_A_Label' } });
    assert.equal(bad.status, 422);
    assert.equal((await call('GET', '/api/v1/volumes', { token: owner })).json.volumes.length, 1);
  });

  it('takes a 24 MiB file and gives back the same bytes; lists folders and files; replaces a file whole', async () => {
    const big = randomBytes(24 * 1024 * 1024);
    const stored = await put('models', 'weights/big.bin', big);
    assert.equal(stored.status, 201);
    assert.deepEqual([stored.json.entry.path, stored.json.entry.type, stored.json.entry.size], ['weights/big.bin', 'file', big.length]);
    const response = await fetch(`${platform.url}/api/v1/volumes/models/files?path=weights/big.bin`, {
      headers: { Authorization: `Bearer ${owner}` },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), String(big.length));
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    assert.equal(sha(Buffer.from(await response.arrayBuffer())), sha(big));

    assert.equal((await put('models', 'notes.txt', Buffer.from('first'))).status, 201);
    assert.equal((await put('models', 'notes.txt', Buffer.from('second, longer'))).status, 201);
    const text = await fetch(`${platform.url}/api/v1/volumes/models/files?path=notes.txt`, {
      headers: { Authorization: `Bearer ${owner}` },
    });
    assert.equal(await text.text(), 'second, longer');
    const top = await call('GET', '/api/v1/volumes/models/entries', { token: owner });
    assert.deepEqual(
      top.json.entries.map((e: { path: string; type: string }) => `${e.type}:${e.path}`),
      ['file:notes.txt', 'dir:weights'],
    );
    const all = await call('GET', '/api/v1/volumes/models/entries?recursive=true', { token: owner });
    assert.deepEqual(
      all.json.entries.map((e: { path: string }) => e.path),
      ['notes.txt', 'weights', 'weights/big.bin'],
    );
    const one = await call('GET', '/api/v1/volumes/models/entries?path=weights/big.bin', { token: owner });
    assert.deepEqual(
      one.json.entries.map((e: { size: number }) => e.size),
      [big.length],
    );
    assert.equal((await call('GET', '/api/v1/volumes/models', { token: owner })).json.bytes, big.length + 'second, longer'.length);
    const metrics = await fetch(`${platform.url}/metrics`, { headers: { Authorization: `Bearer ${owner}` } });
    assert.match(await metrics.text(), new RegExp(`^svc_volume_bytes\\{workspace="default",volume="models"\\} ${big.length + 14}$`, 'm'));
  });

  it("the dashboard's Volumes page shows each volume's size against its limit, its files and its last change", async () => {
    const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    const response = await fetch(`${platform.url}/dashboard/volumes`, { headers: { Cookie: `svc_session=${secret}` } });
    assert.equal(response.status, 200);
    const body = await response.text();
    assert.match(body, /<a href="\/dashboard\/volumes" aria-current="page">Volumes<\/a>/);
    assert.match(
      body,
      /<th scope="row"><code>models<\/code><\/th>\s*<td>24 MiB of 32 MiB<\/td>\s*<td>2<\/td>\s*<td><time datetime="[^"]+">/,
    );
  });

  it('lists in pages with limit and after; without them, past 10 000 entries, says to page; refuses a bad page', async () => {
    // Written where the volume keeps them, as a container would.
    mkdirSync(files('models', 'crowd'));
    for (let i = 0; i <= 10_000; i++) writeFileSync(files('models', 'crowd', `${String(i).padStart(5, '0')}`), '');
    const whole = await call('GET', '/api/v1/volumes/models/entries?path=crowd', { token: owner });
    assert.equal(whole.status, 400);
    assert.equal(whole.json.error.details.maxEntries, 10_000);
    assert.match(whole.json.error.hint, /limit= and after=/);
    const first = await call('GET', '/api/v1/volumes/models/entries?path=crowd&limit=10000', { token: owner });
    assert.equal(first.status, 200);
    assert.deepEqual([first.json.entries.length, first.json.next], [10_000, 'crowd/09999']);
    const rest = await call('GET', '/api/v1/volumes/models/entries?path=crowd&after=crowd%2F09999', { token: owner });
    assert.deepEqual(rest.json, { entries: [rest.json.entries[0]], next: null });
    assert.equal(rest.json.entries[0].path, 'crowd/10000');
    const small = await call('GET', '/api/v1/volumes/models/entries?limit=1', { token: owner });
    assert.deepEqual([small.json.entries.map((e: { path: string }) => e.path), small.json.next], [['crowd'], 'crowd']);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=10001', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=ten', 'limit'],
      ['path=crowd&after=weights%2Fbig.bin', 'after'],
      ['path=crowd&after=crowd', 'after'],
      ['path=crowd&after=crowd%2F..%2F..%2Fetc', 'after'],
    ]) {
      const refused = await call('GET', `/api/v1/volumes/models/entries?${query}`, { token: owner });
      assert.equal(refused.status, 400, query);
      assert.equal(refused.json.error.details.field, field, query);
    }
    // The dashboard counts the files of one page, and says so.
    const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    const page = await fetch(`${platform.url}/dashboard/volumes`, { headers: { Cookie: `svc_session=${secret}` } });
    assert.match(await page.text(), /<td>24 MiB of 32 MiB<\/td>\s*<td>at least 9\d{3}<\/td>\s*<td>—<\/td>/);
    rmSync(files('models', 'crowd'), { recursive: true });
  });

  it('refuses paths that leave the volume, written or through a link, and a folder where a file is wanted', async () => {
    for (const bad of ['../outside.txt', '/etc/passwd', 'a/../../b', 'a\\b', 'a/.svc-upload-0-replaced']) {
      const answer = await call('GET', `/api/v1/volumes/models/files?path=${encodeURIComponent(bad)}`, { token: owner });
      assert.equal(answer.status, 400, bad);
      assert.equal(answer.json.error.details.field, 'path', bad);
    }
    // A link a container could have made, pointing out of the volume: neither read nor written through.
    symlinkSync('/etc', files('models', 'escape'));
    const through = await call('GET', '/api/v1/volumes/models/files?path=escape/hostname', { token: owner });
    assert.equal(through.status, 400);
    assert.match(through.json.error.message, /leads outside the volume \(through a symbolic link\)/);
    assert.equal((await put('models', 'escape/planted.txt', Buffer.from('x'))).status, 400);
    assert.equal(existsSync('/etc/planted.txt'), false);
    const listed = await call('GET', '/api/v1/volumes/models/entries', { token: owner });
    assert.ok(listed.json.entries.some((e: { path: string; type: string }) => e.path === 'escape' && e.type === 'link'));
    // Removing the link removes the link alone.
    assert.equal((await call('DELETE', '/api/v1/volumes/models/files?path=escape', { token: owner })).status, 204);
    assert.ok(existsSync('/etc/hostname') || existsSync('/etc'));

    const folder = await call('GET', '/api/v1/volumes/models/files?path=weights', { token: owner });
    assert.equal(folder.status, 400);
    const missing = await call('GET', '/api/v1/volumes/models/files?path=nothing.bin', { token: owner });
    assert.equal(missing.status, 404);
    const overFolder = await put('models', 'weights', Buffer.from('x'));
    assert.equal(overFolder.status, 409);
  });

  it('refuses an upload past the limits with the figures, and keeps nothing of it', async () => {
    const tooBig = await put('models', 'more.bin', randomBytes(9 * 1024 * 1024)); // 24 MiB held, 32 MiB at most
    assert.equal(tooBig.status, 507);
    assert.equal(tooBig.json.error.code, 'volume_full');
    assert.match(tooBig.json.error.message, /^the volume models holds 24 MiB of at most 32 MiB; 9 MiB more do not fit\.$/);
    assert.deepEqual(Object.keys(tooBig.json.error.details).sort(), ['addingBytes', 'maxBytes', 'usedBytes']);
    // Without a length (chunked), the write stops at the room left; the client, still sending, reads the answer.
    const chunk = randomBytes(1024 * 1024);
    const streamed = await fetch(`${platform.url}/api/v1/volumes/models/files?path=streamed.bin`, {
      method: 'PUT',
      headers: { ...OCTETS, Authorization: `Bearer ${owner}` },
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 12; i++) yield chunk;
        })(),
      ),
      duplex: 'half',
    } as RequestInit);
    assert.equal(streamed.status, 507);
    assert.match(
      ((await streamed.json()) as { error: { message: string } }).error.message,
      /^the volume models holds 24 MiB of at most 32 MiB; /,
    );
    assert.ok(!readdirSync(files('models')).some((name) => name.startsWith('streamed') || name.startsWith('.svc-upload-')));
    // A client that reads the refusal and then goes away mid-body leaves a server that answers on.
    const refusedThenGone = await new Promise<number>((resolve, reject) => {
      const request = http.request(new URL(`${platform.url}/api/v1/volumes/models/files?path=gone.bin`), {
        method: 'PUT',
        headers: { ...OCTETS, Authorization: `Bearer ${owner}`, 'Transfer-Encoding': 'chunked' },
      });
      request.on('response', (response) => {
        response.resume();
        request.destroy();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      // Until the request is gone: a write to a destroyed request calls back at once, with an error.
      const send = () => request.write(chunk, (error) => error || setImmediate(send));
      send();
    });
    assert.equal(refusedThenGone, 507);
    assert.equal((await call('GET', '/api/v1/volumes/models', { token: owner })).status, 200, 'the server still answers');
    await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'datasets' } });
    const workspaceFull = await put('datasets', 'rows.bin', randomBytes(17 * 1024 * 1024)); // 41 MiB together, 40 at most
    assert.equal(workspaceFull.status, 507);
    assert.match(workspaceFull.json.error.message, /^the volumes of default hold 24 MiB of at most 40 MiB together/);
    assert.deepEqual(readdirSync(files('datasets')), [], 'nothing of the refused upload is left');
    assert.equal((await put('datasets', 'rows.bin', randomBytes(15 * 1024 * 1024))).status, 201, '39 MiB together fits');
  });

  it('leaves no file under its name when an upload is cut off mid-way', async () => {
    const url = new URL(`${platform.url}/api/v1/volumes/models/files?path=partial.bin`);
    await new Promise<void>((resolve) => {
      const request = http.request(url, {
        method: 'PUT',
        headers: { ...OCTETS, Authorization: `Bearer ${owner}`, 'Content-Length': String(4 * 1024 * 1024) },
      });
      request.on('error', () => resolve());
      request.write(randomBytes(1024 * 1024), () => setTimeout(() => (request.destroy(), resolve()), 200));
    });
    const deadline = Date.now() + 10_000;
    while (readdirSync(files('models')).some((name) => name.startsWith('.svc-upload-')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(
      readdirSync(files('models')).filter((name) => name.startsWith('.svc-upload-') || name === 'partial.bin'),
      [],
    );
  });

  it('is not found from another workspace, in the same words as a volume that never was', async () => {
    await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'acme' } });
    const other = (await call('POST', '/api/v1/workspaces/acme/token', { token: owner, json: {} })).json.secret as string;
    const theirs = await call('GET', '/api/v1/volumes/models', { token: other });
    const none = await call('GET', '/api/v1/volumes/nothing-here', { token: other });
    assert.equal(theirs.status, 404);
    assert.equal(theirs.json.error.message, 'the workspace acme has no volume models.');
    assert.equal(none.json.error.message, 'the workspace acme has no volume nothing-here.');
    for (const [method, at] of [
      ['GET', '/api/v1/volumes/models/entries'],
      ['GET', '/api/v1/volumes/models/files?path=notes.txt'],
      ['DELETE', '/api/v1/volumes/models/files?path=notes.txt'],
      ['DELETE', '/api/v1/volumes/models'],
    ] as const) {
      assert.equal((await call(method, at, { token: other })).status, 404, `${method} ${at}`);
    }
    assert.equal((await put('models', 'notes.txt', Buffer.from('x'))).status, 201, 'still there for its own workspace');
    assert.deepEqual((await call('GET', '/api/v1/volumes', { token: other })).json.volumes, []);
  });

  it('removes a folder only with recursive, never the root, and deletes the volume with its files', async () => {
    assert.equal((await call('DELETE', '/api/v1/volumes/models/files?path=weights', { token: owner })).status, 400);
    for (const root of ['?path=', '?path=.&recursive=true', '']) {
      const refused = await call('DELETE', `/api/v1/volumes/models/files${root}`, { token: owner });
      assert.equal(refused.status, 400, root);
      assert.match(refused.json.error.message, /a volume's root cannot be removed/, root);
      assert.match(refused.json.error.hint, /svc volume delete models/, root);
    }
    assert.equal((await call('DELETE', '/api/v1/volumes/models/files?path=weights&recursive=true', { token: owner })).status, 204);
    assert.equal((await call('DELETE', '/api/v1/volumes/models', { token: owner })).status, 204);
    assert.equal(existsSync(files('models')), false);
    assert.equal((await call('GET', '/api/v1/volumes/models', { token: owner })).status, 404);
  });

  it('measures the volumes again before it refuses an upload, so that files a container removed make room', async () => {
    await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'shrinking' } });
    const twenty = randomBytes(20 * 1024 * 1024);
    assert.equal((await put('shrinking', 'a.bin', twenty)).status, 201);
    rmSync(files('shrinking', 'a.bin')); // as a container that mounts it would: unseen by the server
    // 20 MiB more would not fit beside the size kept from the first upload; measured again, it does.
    const again = await put('shrinking', 'b.bin', twenty);
    assert.equal(again.status, 201, again.text);
  });

  it('counts the uploads under way in the room: two at once that fit only one by one get one 201 and one 507', async () => {
    assert.equal((await call('DELETE', '/api/v1/volumes/shrinking/files?path=b.bin', { token: owner })).status, 204);
    const fifteen = randomBytes(15 * 1024 * 1024); // the workspace holds 15 MiB of its 40
    const answers = await Promise.all([put('shrinking', 'one.bin', fifteen), put('shrinking', 'two.bin', fifteen)]);
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 507]);
  });
});

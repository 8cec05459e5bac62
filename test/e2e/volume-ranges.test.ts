/**
 * Downloads that go on where they stopped, over the real API of an embedded platform: `Range` answers (206
 * with `Content-Range`, 416 past the end, the whole file for several ranges or an `If-Range` naming an older
 * version), and the CLI's download cut off mid-way by a proxy that closes the connection, then finished by a
 * second download that asks only for the rest; a file replaced meanwhile is fetched whole.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { ApiClient } from '../../cli/api-client.js';
import { type DownloadOptions, downloadFile } from '../../cli/transfer/download.js';
import { currentBoot } from '../../cli/transfer/partial-download.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { mountTmpfs } from '../helpers/tmpfs.js';

const MiB = 1024 * 1024;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * A TCP proxy to `port` that closes both sides of a connection once `cutAfter` bytes of answer went through
 * it; it counts the connections made through it, and the most open at once.
 */
async function proxyTo(port: number, cutAfter = Number.POSITIVE_INFINITY) {
  let open = 0;
  let made = 0;
  let mostAtOnce = 0;
  const server = net.createServer((client) => {
    made += 1;
    open += 1;
    mostAtOnce = Math.max(mostAtOnce, open);
    client.once('close', () => (open -= 1));
    const upstream = net.connect(port, '127.0.0.1');
    client.pipe(upstream);
    let passed = 0;
    upstream.on('data', (chunk: Buffer) => {
      passed += chunk.length;
      if (passed <= cutAfter) return void client.write(chunk);
      client.destroy();
      upstream.destroy();
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    made: () => made,
    mostAtOnce: () => mostAtOnce,
    close: () => server.close(),
  };
}

/** An HTTP proxy to `port` that takes `Range` off the requests (svc answers whole) or the ETag off the answers. */
async function httpProxyTo(port: number, drop: 'range' | 'etag') {
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests += 1;
    const headers = { ...request.headers };
    if (drop === 'range') delete headers.range;
    const upstream = http.request({ host: '127.0.0.1', port, path: request.url, method: request.method, headers }, (answer) => {
      const answerHeaders = { ...answer.headers };
      if (drop === 'etag') delete answerHeaders.etag;
      response.writeHead(answer.statusCode ?? 502, answerHeaders);
      answer.pipe(response);
    });
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests, close: () => server.close() };
}

describe('volume downloads that go on where they stopped (Range)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let scratch: string;
  const file = randomBytes(6 * MiB);
  const filePath = '/api/v1/volumes/ranges/files?path=data.bin';
  const get = (headers: Record<string, string>) =>
    fetch(`${platform.url}${filePath}`, { headers: { Authorization: `Bearer ${owner}`, ...headers } });
  const client = () => new ApiClient({ server: platform.url, token: owner });
  /** `downloadFile` of the file into `to`: the bytes it moved, and where it said it went on from (-1: from nothing). */
  const downloadCounted = async (to: string, options: DownloadOptions) => {
    let moved = 0;
    let resumedAt = -1;
    await downloadFile(client(), filePath, to, {
      ...options,
      onBytes: (bytes) => (moved += bytes),
      onResume: (bytes) => (resumedAt = bytes),
    });
    return { moved, resumedAt };
  };

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-ranges-'));
    assert.equal((await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'ranges' } })).status, 201);
    const stored = await call('PUT', '/api/v1/volumes/ranges/files?path=data.bin', {
      token: owner,
      body: file,
      headers: { 'Content-Type': 'application/octet-stream' },
    });
    assert.equal(stored.status, 201, stored.text);
  });
  after(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await platform?.close();
  });

  it('answers one range with 206 and Content-Range, past the end with 416, and the whole file otherwise', async () => {
    const whole = await get({});
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    const etag = whole.headers.get('etag')!;
    assert.match(etag, /^"[0-9a-z-]+"$/);
    await whole.arrayBuffer();

    const part = await get({ Range: 'bytes=10-19' });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-19/${file.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), file.subarray(10, 20));

    const rest = await get({ Range: `bytes=${file.length - 5}-`, 'If-Range': etag });
    assert.equal(rest.status, 206);
    assert.deepEqual(Buffer.from(await rest.arrayBuffer()), file.subarray(file.length - 5));

    const past = await get({ Range: `bytes=${file.length}-` });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${file.length}`);
    assert.equal(((await past.json()) as { error: { code: string } }).error.code, 'range_not_satisfiable');

    const unitInAnyCase = await get({ Range: 'Bytes=1-3' });
    assert.equal(unitInAnyCase.status, 206);
    assert.deepEqual(Buffer.from(await unitInAnyCase.arrayBuffer()), file.subarray(1, 4));
    const suffix = await get({ Range: 'bytes=-4' });
    assert.equal(suffix.status, 206);
    assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), file.subarray(file.length - 4));

    // RFC 9110: an unknown unit is ignored, as are several ranges, a malformed or invalid range, an older
    // If-Range, and a suffix longer than the file is all of it: each gets the whole file.
    const wholeAnyway: Record<string, string>[] = [
      { Range: 'bytes=0-1,5-6' },
      { Range: `lines=${file.length}-` },
      { Range: 'bytes=abc' },
      { Range: 'bytes=9-2' },
      { Range: `bytes=-${file.length + 1}` },
      { Range: 'bytes=0-9', 'If-Range': '"older"' },
    ];
    for (const headers of wholeAnyway) {
      const answered = await get(headers);
      assert.equal(answered.status, 200, JSON.stringify(headers));
      assert.equal(sha(Buffer.from(await answered.arrayBuffer())), sha(file), `the whole file for ${JSON.stringify(headers)}`);
    }
  });

  it('keeps a cut-off download and finishes it with only the bytes it lacks', async () => {
    const to = path.join(scratch, 'data.bin');
    const proxy = await proxyTo(Number(new URL(platform.url).port), 2 * MiB);
    try {
      await assert.rejects(
        downloadFile(new ApiClient({ server: proxy.url, token: owner }), filePath, to),
        (error: Error & { hint?: string }) => {
          assert.match(error.message, /^the download from http:\/\/127\.0\.0\.1:\d+ stopped after \d+ bytes/);
          assert.match(error.hint ?? '', /Run the same command again: it goes on from there/);
          return true;
        },
      );
    } finally {
      proxy.close();
    }
    assert.ok(!existsSync(to), 'nothing under its name');
    const kept = statSync(`${to}.svc-partial`).size;
    assert.ok(kept > 0 && kept < file.length, `a beginning kept: ${kept} bytes`);
    assert.match(readFileSync(`${to}.svc-partial.etag`, 'utf8'), /^"/);

    const { moved, resumedAt } = await downloadCounted(to, {});
    assert.equal(resumedAt, kept, 'it went on from what it had');
    assert.equal(moved, file.length - kept, 'only the rest came');
    assert.equal(sha(readFileSync(to)), sha(file));
    assert.ok(!existsSync(`${to}.svc-partial`) && !existsSync(`${to}.svc-partial.etag`), 'nothing of the partial left');
  });

  it('fetches the file whole when it changed since the part it has', async () => {
    const to = path.join(scratch, 'changed.bin');
    writeFileSync(`${to}.svc-partial`, randomBytes(MiB));
    writeFileSync(`${to}.svc-partial.etag`, '"an-older-version"');
    let resumed = false;
    await downloadFile(client(), filePath, to, { onResume: () => (resumed = true) });
    assert.equal(resumed, false);
    assert.equal(sha(readFileSync(to)), sha(file));
  });

  it('renames a partial file that is already whole, and starts over from one longer than the file', async () => {
    const etag = (await get({})).headers.get('etag')!;
    const whole = path.join(scratch, 'whole.bin');
    writeFileSync(`${whole}.svc-partial`, file);
    writeFileSync(`${whole}.svc-partial.etag`, etag);
    let moved = 0;
    await downloadFile(client(), filePath, whole, { onBytes: (bytes) => (moved += bytes) });
    assert.equal(moved, 0, 'nothing fetched again');
    assert.equal(sha(readFileSync(whole)), sha(file));

    const longer = path.join(scratch, 'longer.bin');
    writeFileSync(`${longer}.svc-partial`, Buffer.concat([file, randomBytes(10)]));
    writeFileSync(`${longer}.svc-partial.etag`, etag);
    await downloadFile(client(), filePath, longer);
    assert.equal(sha(readFileSync(longer)), sha(file));
    assert.ok(!existsSync(`${longer}.svc-partial.etag`));
  });

  /** Downloads of `filePath` in parts of 1 MiB, two at once: the 6 MiB file is six parts. */
  const inParts = { partBytes: MiB, connections: 2 };

  it('fetches a file of several parts over two connections at once, each part where it belongs', async () => {
    const to = path.join(scratch, 'parts.bin');
    const proxy = await proxyTo(Number(new URL(platform.url).port));
    let moved = 0;
    try {
      await downloadFile(new ApiClient({ server: proxy.url, token: owner }), filePath, to, {
        ...inParts,
        onBytes: (bytes) => (moved += bytes),
      });
    } finally {
      proxy.close();
    }
    assert.equal(sha(readFileSync(to)), sha(file));
    assert.equal(moved, file.length, 'each byte fetched once');
    assert.equal(proxy.mostAtOnce(), 2, 'two parts at once');
    assert.deepEqual(
      readdirSync(scratch).filter((name) => name.startsWith('parts.bin.')),
      [],
      'nothing of the partial left',
    );
  });

  it('keeps every part that came when the parts are cut off, and fetches only the others after', async () => {
    const to = path.join(scratch, 'cut-parts.bin');
    // Each connection passes its first part and half of its second: four parts of six come, two halves are lost.
    const proxy = await proxyTo(Number(new URL(platform.url).port), 1.5 * MiB);
    try {
      await assert.rejects(
        downloadFile(new ApiClient({ server: proxy.url, token: owner }), filePath, to, inParts),
        (error: Error & { code?: string; hint?: string }) => {
          assert.equal(error.code, 'server_unreachable');
          assert.match(error.hint ?? '', /Run the same command again: it goes on from there/);
          return true;
        },
      );
    } finally {
      proxy.close();
    }
    assert.ok(!existsSync(to) && !existsSync(`${to}.svc-partial.etag`), 'not under its name, and not a beginning to append to');
    assert.equal(statSync(`${to}.svc-partial`).size, file.length, 'the partial file has the size of the file');
    const record = JSON.parse(readFileSync(`${to}.svc-partial.parts`, 'utf8')) as { etag: string; size: number; done: [number, number][] };
    assert.equal(record.size, file.length);
    const kept = record.done.reduce((sum, [start, end]) => sum + end - start, 0);
    assert.ok(kept >= 2 * MiB && kept < file.length, `the parts that came are recorded: ${JSON.stringify(record.done)}`);
    const partial = readFileSync(`${to}.svc-partial`);
    for (const [start, end] of record.done)
      assert.ok(partial.subarray(start, end).equals(file.subarray(start, end)), `bytes ${start}-${end}`);

    const { moved, resumedAt } = await downloadCounted(to, inParts);
    assert.equal(resumedAt, kept, 'it went on from the parts it had');
    assert.equal(moved, file.length - kept, 'only the missing bytes came');
    assert.equal(sha(readFileSync(to)), sha(file));
    assert.ok(!existsSync(`${to}.svc-partial`) && !existsSync(`${to}.svc-partial.parts`), 'nothing of the partial left');
  });

  it('starts over from parts of another version of the file, parts written before the machine restarted, or a record it cannot read', async () => {
    const first = await get({ Range: 'bytes=0-0' });
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const boot = currentBoot();
    for (const [name, record] of [
      ['older-parts.bin', JSON.stringify({ etag: '"an-older-version"', size: file.length, done: [[0, MiB]], boot })],
      // The right version, but of another boot: what it says was written may have been lost with the page cache.
      ['before-restart.bin', JSON.stringify({ etag, size: file.length, done: [[0, MiB]], boot: 'another-boot' })],
      ['unreadable-parts.bin', '{"etag": "x", "size": '],
    ] as const) {
      const to = path.join(scratch, name);
      writeFileSync(`${to}.svc-partial`, randomBytes(file.length));
      writeFileSync(`${to}.svc-partial.parts`, record);
      let resumed = false;
      await downloadFile(client(), filePath, to, { ...inParts, onResume: () => (resumed = true) });
      assert.equal(resumed, false, name);
      assert.equal(sha(readFileSync(to)), sha(file), name);
      assert.ok(!existsSync(`${to}.svc-partial.parts`), name);
    }
  });

  it('refuses a second download into the same file while the first runs, and takes over a lock left by one gone', async () => {
    const to = path.join(scratch, 'locked.bin');
    const other = spawn('sleep', ['30']);
    try {
      writeFileSync(`${to}.svc-partial.lock`, String(other.pid));
      await assert.rejects(downloadFile(client(), filePath, to), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'conflict');
        assert.match(error.message, new RegExp(`another download \\(process ${other.pid}\\) is writing`));
        return true;
      });
      assert.ok(!existsSync(to));
    } finally {
      other.kill();
    }
    await new Promise((resolve) => other.once('exit', resolve));
    await downloadFile(client(), filePath, to); // its process is gone now
    assert.equal(sha(readFileSync(to)), sha(file));
    assert.ok(!existsSync(`${to}.svc-partial.lock`), 'the lock is released');
  });

  it('fetches the file whole behind a proxy that takes Range off, or the ETag the parts are checked against', async () => {
    for (const drop of ['range', 'etag'] as const) {
      const to = path.join(scratch, `behind-${drop}.bin`);
      const proxy = await httpProxyTo(Number(new URL(platform.url).port), drop);
      try {
        await downloadFile(new ApiClient({ server: proxy.url, token: owner }), filePath, to, inParts);
      } finally {
        proxy.close();
      }
      assert.equal(sha(readFileSync(to)), sha(file), drop);
      // Without Range the first answer is the file; without an ETag the first part is dropped for one whole answer.
      assert.equal(proxy.requests(), drop === 'range' ? 1 : 2, drop);
      assert.deepEqual(
        readdirSync(scratch).filter((name) => name.startsWith(`behind-${drop}.bin.`)),
        [],
        drop,
      );
    }
  });

  it('reports an answer cut right after its head as cut off, whole or in parts, and never hangs', async () => {
    for (const ranges of [true, false]) {
      // A server that sends the head of the answer asked for and goes: the body's writer is set up after the connection closed.
      const server = net.createServer((socket) => {
        socket.once('data', (request: Buffer) => {
          const [, first, last] = /Range: bytes=(\d+)-(\d+)/i.exec(request.toString()) ?? [];
          const head =
            ranges && first !== undefined
              ? `HTTP/1.1 206 Partial Content\r\nContent-Range: bytes ${first}-${last}/6291456\r\nContent-Length: ${Number(last) - Number(first) + 1}\r\n`
              : 'HTTP/1.1 200 OK\r\nContent-Length: 6291456\r\n';
          socket.end(`${head}ETag: "v1"\r\n\r\n`, () => socket.destroy());
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const to = path.join(scratch, 'cut-after-head.bin');
      try {
        await assert.rejects(
          downloadFile(
            new ApiClient({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: owner }),
            filePath,
            to,
            inParts,
          ),
          (error: Error & { code?: string }) => error.code === 'server_unreachable',
        );
      } finally {
        server.close();
      }
      assert.ok(!existsSync(`${to}.svc-partial.lock`), 'the lock is released');
      rmSync(`${to}.svc-partial`, { force: true });
      rmSync(`${to}.svc-partial.parts`, { force: true });
      rmSync(`${to}.svc-partial.etag`, { force: true });
    }
  });

  it('reports a local write failure as itself and keeps nothing of it', async () => {
    const to = path.join(scratch, 'blocked.bin');
    mkdirSync(`${to}.svc-partial`); // a folder where the partial file goes
    await assert.rejects(downloadFile(client(), filePath, to), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'EISDIR');
      return true;
    });
    assert.ok(!existsSync(`${to}.svc-partial.etag`), 'nothing to resume from');
  });

  it('reports a disk that fills up part-way as itself, whole or in parts, and keeps nothing of it', async function () {
    const disk = mountTmpfs('3m'); // half of the 6 MiB file
    if (disk === null) return this.skip();
    try {
      for (const options of [{}, { partBytes: MiB, connections: 2 }]) {
        const to = path.join(disk.dir, 'full.bin');
        await assert.rejects(downloadFile(client(), filePath, to, options), (error: Error & { code?: string }) => {
          assert.equal(error.code, 'ENOSPC', JSON.stringify(options));
          return true;
        });
        assert.deepEqual(readdirSync(disk.dir), [], `nothing kept (${JSON.stringify(options)})`);
      }
    } finally {
      disk.unmount();
    }
  });
});

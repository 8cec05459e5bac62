/**
 * FileRangeStream: a file's bytes sent through a few reused buffers. The risk of reusing a buffer is
 * sending it changed before the socket took it; a real HTTP server answering a real client that reads
 * slowly (the socket full, writes waiting) shows each byte arrives as it is on disk.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { open, truncate } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { FileRangeStream } from '../../../../core/infra/files/file-range-stream.js';
import { tempDir } from '../../../helpers/config.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('FileRangeStream', function () {
  this.timeout(60_000);
  const data = randomBytes(24 * 1024 * 1024 + 4321);
  const file = path.join(tempDir('svc-file-range-'), 'data.bin');
  writeFileSync(file, data);
  let server: http.Server;
  let url: string;
  /** What each answer did, once `writeTo` resolved: whether its stream closed (the handle with it). */
  const served: { closed: boolean }[] = [];

  before(async () => {
    server = http.createServer(async (req, res) => {
      const [start, end] = (req.url ?? '').slice(1).split('-').map(Number) as [number, number];
      const stream = new FileRangeStream(await open(file), start, end);
      let closed = false;
      stream.once('close', () => (closed = true));
      res.writeHead(200, { 'content-length': String(end - start + 1) });
      await stream.writeTo(res);
      // The handle closes a moment after (its close is asynchronous): given 5 s, not waited for without end.
      if (!closed) await Promise.race([once(stream, 'close'), sleep(5000)]);
      served.push({ closed });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  /** The answer for `start-end`, read `bytes` at a time with a pause after each (0: as fast as it comes). */
  function fetchSlowly(start: number, end: number, pauseMs: number, stopAfter = Number.POSITIVE_INFINITY): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      http
        .get(`${url}/${start}-${end}`, { agent: false }, (response) => {
          const parts: Buffer[] = [];
          let got = 0;
          response.on('data', (chunk: Buffer) => {
            parts.push(chunk);
            got += chunk.length;
            if (got >= stopAfter) {
              response.destroy();
              resolve(Buffer.concat(parts));
              return;
            }
            if (pauseMs > 0) {
              response.pause();
              setTimeout(() => response.resume(), pauseMs);
            }
          });
          response.on('end', () => resolve(Buffer.concat(parts)));
          response.on('error', reject);
        })
        .on('error', reject);
    });
  }

  it('sends every byte as it is on disk to a client that reads slowly, and closes the file', async () => {
    const got = await fetchSlowly(0, data.length - 1, 2);
    assert.equal(got.length, data.length);
    assert.equal(sha256(got), sha256(data));
    await until(() => served.length === 1);
    assert.deepEqual(served.at(-1), { closed: true });
  });

  it('sends a range starting and ending inside a buffer', async () => {
    const start = 1024 * 1024 - 7;
    const end = 9 * 1024 * 1024 + 13;
    const got = await fetchSlowly(start, end, 0);
    assert.equal(sha256(got), sha256(data.subarray(start, end + 1)));
  });

  it('stops reading, and closes the file, when the client goes away', async () => {
    const before = served.length;
    const got = await fetchSlowly(0, data.length - 1, 1, 3 * 1024 * 1024);
    assert.ok(got.length < data.length);
    await until(() => served.length === before + 1);
    assert.deepEqual(served.at(-1), { closed: true });
  });

  it('never lends the next send a buffer the last one still has in a write', async () => {
    // The buffers a send ends with serve the next sends; one whose write is still queued (a slow socket)
    // must not be among them, or its bytes change before they go out.
    const piece = 1024 * 1024;
    const held: (() => void)[] = [];
    /** A writable that calls back at once (done with the buffer: it keeps a copy) but for its `holdAt`th write. */
    const writable = (holdAt: number, received: Buffer[]) =>
      new Writable({
        highWaterMark: 1,
        write(chunk: Buffer, _encoding, done) {
          if (received.length + 1 === holdAt) {
            received.push(chunk); // the very buffer, still queued
            held.push(() => done());
          } else {
            received.push(Buffer.from(chunk));
            done();
          }
        },
      });
    // Sends of one piece that keep their buffer queued: the spare ones (at most 8) are all taken.
    for (let i = 0; i < 8; i++) await new FileRangeStream(await open(file), 0, piece - 1).writeTo(writable(1, []));
    const received: Buffer[] = [];
    await new FileRangeStream(await open(file), 0, 3 * piece - 1).writeTo(writable(3, received));
    // Three sends of one piece each take a spare buffer, or a new one: never the one still queued.
    const next = await Promise.all(
      [5, 6, 7].map(async (at) => {
        const parts: Buffer[] = [];
        await new FileRangeStream(await open(file), at * piece, (at + 1) * piece - 1).writeTo(writable(0, parts));
        return sha256(Buffer.concat(parts)) === sha256(data.subarray(at * piece, (at + 1) * piece));
      }),
    );
    assert.deepEqual(next, [true, true, true]);
    assert.equal(sha256(Buffer.concat(received)), sha256(data.subarray(0, 3 * piece)), 'the queued bytes are unchanged');
    for (const release of held.splice(0)) release();
  });

  it('read as a plain stream, gives the range and closes the file', async () => {
    const stream = new FileRangeStream(await open(file), 5, 2 * 1024 * 1024 + 5);
    const parts: Buffer[] = [];
    for await (const part of stream as AsyncIterable<Buffer>) parts.push(part);
    assert.equal(sha256(Buffer.concat(parts)), sha256(data.subarray(5, 2 * 1024 * 1024 + 6)));
    assert.equal(stream.destroyed, true);
  });

  it('cuts the answer short when the file is shorter than announced', async () => {
    const short = path.join(path.dirname(file), 'short.bin');
    writeFileSync(short, data.subarray(0, 3 * 1024 * 1024));
    const stream = new FileRangeStream(await open(short), 0, 3 * 1024 * 1024 - 1);
    await truncate(short, 1024 * 1024); // shrunk after the size was announced
    const out = new (await import('node:stream')).PassThrough();
    out.resume();
    const failed = new Promise<Error>((resolve) => out.once('error', resolve));
    await stream.writeTo(out);
    assert.match((await failed).message, /the file ended before the bytes announced/);
  });
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await sleep(10);
  assert.ok(done());
}

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import type { Deployment } from '../../core/services/deployments/types.js';
import { testConfig } from '../helpers/config.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { deployRequest } from './lifecycle-helpers.js';

/** One client frame as RFC 6455 §5.2 lays it out: FIN, RSV bits and opcode, the mask bit and length, the key, the masked payload. */
function frame(
  opcode: number,
  payload: Buffer,
  options: { fin?: boolean; rsv1?: boolean; masked?: boolean; claimedLength?: bigint } = {},
): Buffer {
  const first = (options.fin === false ? 0 : 0x80) | (options.rsv1 ? 0x40 : 0) | opcode;
  const masked = options.masked !== false;
  const length = options.claimedLength ?? BigInt(payload.length);
  let head: Buffer;
  if (length < 126n) head = Buffer.from([first, (masked ? 0x80 : 0) | Number(length)]);
  else if (length < 65536n) {
    head = Buffer.alloc(4);
    head.writeUInt8(first, 0);
    head.writeUInt8((masked ? 0x80 : 0) | 126, 1);
    head.writeUInt16BE(Number(length), 2);
  } else {
    head = Buffer.alloc(10);
    head.writeUInt8(first, 0);
    head.writeUInt8((masked ? 0x80 : 0) | 127, 1);
    head.writeBigUInt64BE(length, 2);
  }
  if (!masked) return Buffer.concat([head, payload]);
  const key = randomBytes(4);
  return Buffer.concat([head, key, Buffer.from(payload.map((byte, i) => byte ^ key[i % 4]!))]);
}

function closePayload(code: number): Buffer {
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code);
  return payload;
}

/**
 * Opens a WebSocket on a raw socket (the handshake by hand), sends `frames`, and resolves with the
 * close code the gateway's first close frame carries (null when the connection ended without one).
 */
function closeCodeAfter(url: string, frames: Buffer[]): Promise<number | null> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(target.port), target.hostname);
    let received = Buffer.alloc(0);
    let upgraded = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close frame within 10 s (got ${received.length} bytes)`));
    }, 10_000);
    const done = (code: number | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(code);
    };
    socket.on('connect', () =>
      socket.write(
        `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (!upgraded) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = received.subarray(0, end).toString();
        if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(`no upgrade: ${head}`));
        upgraded = true;
        received = received.subarray(end + 4);
        for (const piece of frames) socket.write(piece);
      }
      // Server frames are unmasked: skip text and pings until a close frame.
      while (received.length >= 2) {
        const opcode = received[0]! & 0x0f;
        const length = received[1]! & 0x7f;
        if (length >= 126 || received.length < 2 + length) return;
        if (opcode === 0x8) return done(length >= 2 ? received.readUInt16BE(2) : null);
        received = received.subarray(2 + length);
      }
    });
    socket.on('close', () => done(null));
    socket.on('error', () => done(null));
  });
}

/**
 * Hostile and broken WebSocket frames through the gateway's bridge to a realtime handler: each gets
 * the close code RFC 6455 names for it (1002 protocol error, 1007 invalid data, 1009 too big), from
 * the gateway itself, before anything reaches the container; the server stays up and the next
 * client talks as before.
 */
describe('WebSocket frames a client should never send', function () {
  this.timeout(120_000);
  let platform: Platform;
  let url: string;

  before(async () => {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'live.py') });
    platform = await startPlatform({ config: testConfig() });
    const deployment: Deployment = await platform.deployments.deploy(deployRequest(manifest));
    url = deployment.workloads.find((w) => w.name === 'points')!.url!;
  });
  after(async () => platform?.close());

  const cases: [string, () => Buffer[], number][] = [
    ['text that is not UTF-8', () => [frame(0x1, Buffer.from([0x7b, 0xc3, 0x28, 0x7d]))], 1007],
    ['a frame the client did not mask', () => [frame(0x1, Buffer.from('{"x": 1, "y": 2}'), { masked: false })], 1002],
    [
      'a message of 16 MiB and a byte (its length alone), as uvicorn refuses it',
      () => [frame(0x2, Buffer.alloc(0), { claimedLength: (16n << 20n) + 1n })],
      1009,
    ],
    ['a ping in fragments', () => [frame(0x9, Buffer.from('ab'), { fin: false })], 1002],
    ['a continuation with nothing to continue', () => [frame(0x0, Buffer.from('x'))], 1002],
    [
      'a text frame inside a fragmented binary message',
      () => [frame(0x2, Buffer.from('a'), { fin: false }), frame(0x1, Buffer.from('b'))],
      1002,
    ],
    ['a reserved opcode', () => [frame(0x3, Buffer.from('x'))], 1002],
    ['RSV1 set without compression agreed', () => [frame(0x1, Buffer.from('x'), { rsv1: true })], 1002],
    ['a close code that may not be sent (1005)', () => [frame(0x8, closePayload(1005))], 1002],
    ['a close code out of range (999)', () => [frame(0x8, closePayload(999))], 1002],
    ['a close frame of one byte', () => [frame(0x8, Buffer.from([3]))], 1002],
    ['a control frame over 125 bytes', () => [frame(0x9, Buffer.alloc(126))], 1002],
  ];
  for (const [what, frames, code] of cases) {
    it(`closes with ${code} on ${what}`, async () => {
      assert.equal(await closeCodeAfter(url, frames()), code);
    });
  }

  it('still talks to the next client after all of them', async () => {
    const socket = new WebSocket(url.replace(/^http/, 'ws'));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const answer = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
    socket.send(JSON.stringify({ x: 2, y: 3 }));
    assert.deepEqual(JSON.parse(await answer), { sum: 5 });
    socket.close();
  });
});

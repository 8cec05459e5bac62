/**
 * The bench's admission clients, run as their own process so that their CPU
 * is not charged to the gateway. Prints one JSON line.
 *
 *   node dist/bench/gateway/clients.js burst '{"url": "...", "requests": 48, "trials": 10}'
 *   node dist/bench/gateway/clients.js overload '{"url": "...", "capacity": 4, "durationMs": 5000}'
 *
 * burst: each trial opens `requests` connections, then writes one request on
 * every one of them in the same tick, and counts the answers by status
 * (and times the 429s from the write to their first byte).
 *
 * overload: first the saturated throughput (a closed loop with exactly
 * `capacity` connections, so nothing queues), then an open loop offering
 * twice that rate for `durationMs`; goodput is the 2xx rate of the second.
 */
import net from 'node:net';
import { Pool } from 'undici';

export interface BurstSpec {
  readonly url: string;
  readonly requests: number;
  readonly trials: number;
}

export interface BurstTrial {
  /** Answers by status. */
  readonly counts: Record<string, number>;
  /**
   * True when every 429 had gone out before the first admitted request was
   * answered: only then must exactly C + P be admitted (a slot freed earlier
   * may rightly take one more).
   */
  readonly conclusive: boolean;
}

export interface BurstResult {
  readonly trials: BurstTrial[];
  readonly refusedP50us: number;
  readonly refusedP99us: number;
}

export interface OverloadSpec {
  readonly url: string;
  readonly capacity: number;
  readonly durationMs: number;
}

export interface OverloadResult {
  readonly saturatedRps: number;
  readonly offeredRps: number;
  readonly goodputRps: number;
  readonly refused: number;
  readonly serverErrors: number;
  readonly failures: number;
}

function quantile(sorted: readonly number[], q: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
}

async function burst(spec: BurstSpec): Promise<BurstResult> {
  const url = new URL(spec.url);
  const request = `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`;
  const trials: BurstTrial[] = [];
  const refusedUs: number[] = [];
  for (let trial = 0; trial < spec.trials; trial++) {
    const sockets = await Promise.all(
      Array.from(
        { length: spec.requests },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const socket = net.connect(Number(url.port), url.hostname, () => resolve(socket));
            socket.once('error', reject);
          }),
      ),
    );
    const counts: Record<string, number> = {};
    const sentAt: bigint[] = [];
    let lastRefused = 0n;
    let firstServed: bigint | undefined;
    const answers = sockets.map(
      (socket, index) =>
        new Promise<void>((resolve) => {
          let answered = false;
          socket.on('data', (chunk: Buffer) => {
            if (answered) return;
            answered = true;
            const now = process.hrtime.bigint();
            const status = chunk.toString('latin1', 9, 12); // "HTTP/1.1 429 …"
            counts[status] = (counts[status] ?? 0) + 1;
            if (status === '429') {
              refusedUs.push(Number(now - sentAt[index]!) / 1000);
              if (now > lastRefused) lastRefused = now;
            } else firstServed ??= now;
          });
          socket.on('error', () => {});
          socket.on('close', () => resolve());
        }),
    );
    // Every request leaves in this one loop: the gateway finds them all waiting when it next reads.
    sockets.forEach((socket, index) => {
      sentAt[index] = process.hrtime.bigint();
      socket.write(request);
    });
    await Promise.all(answers);
    trials.push({ counts, conclusive: firstServed === undefined || lastRefused < firstServed });
  }
  refusedUs.sort((a, b) => a - b);
  return { trials, refusedP50us: quantile(refusedUs, 0.5), refusedP99us: quantile(refusedUs, 0.99) };
}

async function overload(spec: OverloadSpec): Promise<OverloadResult> {
  const url = new URL(spec.url);
  const path = `${url.pathname}${url.search}`;
  // Saturated: exactly `capacity` requests at a time, none queued.
  const saturatedPool = new Pool(url.origin, { connections: spec.capacity, pipelining: 1 });
  let done = 0;
  const warmEnd = performance.now() + 500;
  const end = warmEnd + 3000;
  await Promise.all(
    Array.from({ length: spec.capacity }, async () => {
      while (performance.now() < end) {
        const response = await saturatedPool.request({ method: 'GET', path });
        await response.body.dump();
        if (response.statusCode === 200 && performance.now() >= warmEnd) done++;
      }
    }),
  );
  await saturatedPool.close();
  const saturatedRps = done / 3;

  // Open loop at twice that rate: requests leave on schedule whether or not earlier ones were answered.
  const offeredRps = 2 * saturatedRps;
  const pool = new Pool(url.origin, { connections: 1024, pipelining: 1 });
  let ok = 0;
  let refused = 0;
  let serverErrors = 0;
  let failures = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < spec.durationMs) {
    const due = Math.floor(((performance.now() - start) / 1000) * offeredRps);
    for (; sent < due; sent++) {
      pending.push(
        pool.request({ method: 'GET', path, headersTimeout: 10_000 }).then(
          async (response) => {
            await response.body.dump();
            if (response.statusCode === 200) ok++;
            else if (response.statusCode === 429) refused++;
            else if (response.statusCode >= 500) serverErrors++;
            else failures++;
          },
          () => void failures++,
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
  await pool.close();
  return {
    saturatedRps: Math.round(saturatedRps),
    offeredRps: Math.round(offeredRps),
    goodputRps: Math.round(ok / (spec.durationMs / 1000)),
    refused,
    serverErrors,
    failures,
  };
}

const [mode, json] = process.argv.slice(2);
const result =
  mode === 'burst' ? await burst(JSON.parse(json ?? '{}') as BurstSpec) : await overload(JSON.parse(json ?? '{}') as OverloadSpec);
process.stdout.write(`${JSON.stringify(result)}\n`);

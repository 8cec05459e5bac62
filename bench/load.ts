/**
 * A closed-loop HTTP/1.1 keep-alive load generator: `connections` loops,
 * each sending its next request when the previous answer arrived, for
 * `durationMs` after a warm-up. Runs as its own process so that its CPU is
 * not charged to the process under test. Prints one JSON line.
 *
 *   node dist/bench/load.js '{"url": "...", "socketPath": null, "connections": 16, "durationMs": 3000}'
 */
import { Pool } from 'undici';

export interface LoadSpec {
  readonly url: string;
  /** Connect over this Unix socket instead of TCP (the URL then only gives the path). */
  readonly socketPath: string | null;
  readonly connections: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly headers?: Record<string, string>;
}

export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly rps: number;
  readonly p50us: number;
  readonly p99us: number;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  const url = new URL(spec.url);
  const pool = new Pool(spec.socketPath ? 'http://localhost' : url.origin, {
    connections: spec.connections,
    pipelining: 1,
    ...(spec.socketPath ? { socketPath: spec.socketPath } : {}),
  });
  const path = `${url.pathname}${url.search}`;
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const warmEnd = start + spec.warmupMs;
  const end = warmEnd + spec.durationMs;

  async function loop(): Promise<void> {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const response = await pool.request({ method: 'GET', path, headers: spec.headers ?? {} });
        await response.body.dump();
        if (response.statusCode !== 200) errors++;
      } catch {
        errors++;
      }
      if (t0 >= warmEnd) latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: spec.connections }, loop));
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 1000);
  const result: LoadResult = {
    requests: latencies.length,
    errors,
    rps: Math.round(latencies.length / (spec.durationMs / 1000)),
    p50us: at(0.5),
    p99us: at(0.99),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();

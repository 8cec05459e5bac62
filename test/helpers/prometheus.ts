/**
 * A real Prometheus for the metrics tests: Debian's `prometheus` on a free
 * loopback port, scraping the targets it is given every second, its data in
 * a temporary folder. Tests skip, saying so, where it is missing; on CI
 * (`CI=true`) they fail instead, since .ci/run installs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './config.js';
import { requireDebianTool } from './debian-tool.js';
import { freePort } from './free-port.js';
import { until } from './until.js';

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';

/** Skips the calling test (or suite) when Prometheus is missing, except on CI. */
export function requirePrometheus(context: Mocha.Context): void {
  requireDebianTool(context, { package: 'prometheus', bin: PROMETHEUS_BIN, variable: 'PROMETHEUS_BIN' });
}

/** One scrape job: `host:port` targets, a metrics path, and a bearer token file when the target wants one. */
export interface ScrapeJob {
  readonly name: string;
  readonly target: string;
  readonly path: string;
  readonly tokenFile?: string;
}

export interface Prometheus {
  readonly url: string;
  /** An instant query's result vector (`/api/v1/query`). */
  query(expression: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(jobs: readonly ScrapeJob[]): Promise<Prometheus> {
  const dir = tempDir('svc-prometheus-');
  const port = await freePort();
  // Prometheus reads YAML; JSON is YAML, so the config needs no YAML writer.
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms' },
    scrape_configs: jobs.map((job) => ({
      job_name: job.name,
      metrics_path: job.path,
      static_configs: [{ targets: [job.target] }],
      ...(job.tokenFile === undefined ? {} : { authorization: { type: 'Bearer', credentials_file: job.tokenFile } }),
    })),
  };
  const file = path.join(dir, 'prometheus.yml');
  writeFileSync(file, JSON.stringify(config, null, 2));
  let output = '';
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [`--config.file=${file}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await until('prometheus answers /-/ready', async () => (await fetch(`${url}/-/ready`).catch(() => null))?.ok, {
    timeoutMs: 30_000,
    abort: () => (child.exitCode === null ? undefined : `prometheus exited with ${child.exitCode}`),
    context: () => output.slice(-2000),
  });
  return {
    url,
    async query(expression) {
      const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expression })}`);
      const body = (await response.json()) as {
        status: string;
        error?: string;
        data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`prometheus refused ${expression}: ${body.error}`);
      return body.data!.result;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

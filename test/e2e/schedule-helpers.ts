/** The scheduled-functions fixture (test/fixtures/schedules) copied with its own output folder, uploaded, and deployed with chosen functions. */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import type { Call } from '../core/http/api/client.js';
import { tempDir } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';

export interface ScheduleFixture {
  /** Where the functions append one line per run: `tick`, `slow-start`, `slow-end`; `secret` (the values `secret_tick` read). */
  readonly out: string;
  /** The body that deploys the app with only `functions` (the others left out of the manifest). */
  body(
    functions: readonly string[],
    change?: (workload: any) => void,
  ): { manifest: unknown; bundle: string; prune: true; inlineSecrets?: readonly Record<string, string>[] };
  /** Lines a function appended so far (run starts or ends). */
  lines(name: string): number[];
}

export async function scheduleFixture(baseUrl: string, token: string): Promise<ScheduleFixture> {
  const project = tempDir('svc-sched-app-');
  const out = tempDir('svc-sched-out-');
  cpSync(path.join(packageRoot, 'test', 'fixtures', 'schedules'), project, { recursive: true });
  writeFileSync(path.join(project, 'settings.py'), `OUT = ${JSON.stringify(out)}\n`);
  const manifest = await loadManifest({ target: path.join(project, 'app.py') });
  const bundle = await bundleOfFolder(project);
  assert.equal((await upload(baseUrl, token, bundle.bytes, bundle.sha256)).status, 201);
  return {
    out,
    body(functions, change) {
      const raw = structuredClone(manifest.raw) as any;
      raw.workloads = raw.workloads.filter((w: { name: string }) => functions.includes(w.name));
      for (const w of raw.workloads as unknown[]) change?.(w);
      // `secret_tick`'s `svc.Secret.from_dict` values go beside the manifest, as `svc deploy` sends them, when it is deployed
      // (a svc with Consul state and no secrets key refuses to keep them).
      const inline = raw.workloads.some((w: { secrets?: string[] }) => (w.secrets ?? []).some((name) => name.startsWith('@')));
      return {
        manifest: raw,
        bundle: bundle.sha256,
        prune: true,
        ...(inline && manifest.inlineSecrets !== undefined ? { inlineSecrets: manifest.inlineSecrets } : {}),
      };
    },
    lines(name) {
      const file = path.join(out, name);
      return existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map(Number)
        : [];
    },
  };
}

export interface RunsAnswer {
  readonly schedules: { function: string; schedule: Record<string, unknown>; description: string; nextRunAt: string | null }[];
  readonly runs: {
    id: string;
    function: string;
    status: string;
    scheduledAt: string;
    startedAt: string | null;
    endedAt: string | null;
    durationMs: number | null;
    error: { code: string | null; message: string } | null;
  }[];
}

export async function scheduledRuns(call: Call, token: string, app = 'sched'): Promise<RunsAnswer> {
  const answer = await call('GET', `/api/v1/apps/${app}/runs`, { token });
  assert.equal(answer.status, 200, answer.text);
  return answer.json as RunsAnswer;
}

/** No tick ran twice: every run (skipped ones included) of a function is for a tick of its own. */
export function assertTicksOnce(runs: RunsAnswer['runs']): void {
  const ticks = runs.map((run) => `${run.function} ${run.scheduledAt}`);
  assert.equal(new Set(ticks).size, ticks.length, `a tick ran twice: ${ticks.join(', ')}`);
}

/** What `secret_tick` read on each run: `<SCHED_SECRET> <SCHED_INLINE>`. */
export function secretLines(fixture: ScheduleFixture): string[] {
  const file = path.join(fixture.out, 'secret');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
}

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createNomadDriver } from '../../../../core/infra/scheduler/nomad/driver.js';
import { waitNoneMatching } from '../../../helpers/processes.js';
import { startNomadStandin } from '../../../standins/nomad/index.js';
import { describeDriverConformance } from './conformance.js';
import { fixtureCompile, MARKER, nomadUnit } from './nomad-fixture.js';

const TERMINAL = ['complete', 'failed', 'lost'];

describeDriverConformance('Nomad driver (against the Nomad stand-in)', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'nomad-conformance-'));
  const nomad = await startNomadStandin({ dataDir });
  const driver = createNomadDriver({
    url: nomad.url,
    compile: fixtureCompile,
    healthTimeoutMs: 30_000,
    stopTimeoutMs: 30_000,
    blockingWaitMs: 5_000,
  });

  async function get(p: string): Promise<any> {
    const response = await fetch(nomad.url + p);
    const text = await response.text();
    if (response.status === 404) return undefined;
    assert.equal(response.status, 200, text);
    return JSON.parse(text);
  }
  const allocations = async (key: string, all: boolean): Promise<any[]> =>
    (await get(`/v1/job/${driver.jobId(key)}/allocations${all ? '?all=true' : ''}`)) ?? [];

  return {
    driver,
    capabilities: { exactStop: false, closeStopsContainers: false, submitStartsMinimum: true },
    unit: (name, scaling = {}) => nomadUnit(name, { workers: 1, ...scaling }),
    running: async (key) => (await allocations(key, false)).filter((a) => !TERMINAL.includes(a.ClientStatus)).length,
    started: async (key) => (await allocations(key, true)).length,
    processes: () => [],
    async cleanup() {
      // Jobs outlive the driver by design (close() does not stop them): purge whatever is left.
      for (const job of (await get('/v1/jobs')) ?? []) {
        const response = await fetch(`${nomad.url}/v1/job/${encodeURIComponent(job.ID)}?purge=true`, { method: 'DELETE' });
        assert.equal(response.status, 200, await response.text());
      }
      await nomad.close();
      rmSync(dataDir, { recursive: true, force: true });
      assert.deepEqual(await waitNoneMatching(MARKER, 10_000), [], 'fixture processes outlived the stand-in');
    },
  };
});

/**
 * One pair of real agents per test file, started before its first test and
 * stopped after its last; the whole file is skipped, saying why, when the
 * binaries are missing (`npm test` never needs them).
 */
import { findAgentBinaries, startCluster, type Cluster } from './agents.js';
import { SvcServer } from './svc-process.js';

export function useCluster(suite: Mocha.Suite): () => Promise<Cluster> {
  let started: Promise<Cluster> | null = null;
  suite.beforeAll(function () {
    this.timeout(180_000);
    const found = findAgentBinaries();
    if ('missing' in found) {
      console.log(`    skipped "${suite.title}": needs ${found.missing}`);
      this.skip();
    }
    started = startCluster(found as Exclude<typeof found, { missing: string }>);
    return started.then((cluster) => console.log(`    (${cluster.versions.nomad}, ${cluster.versions.consul})`));
  });
  // Registered before the file's own after hooks, so it runs first: svc servers stop before the agents do.
  suite.afterAll(async function () {
    this.timeout(120_000);
    await SvcServer.stopAll();
    if (started !== null) await (await started.catch(() => null))?.close();
  });
  return () => {
    if (started === null) throw new Error('the cluster is not started');
    return started;
  };
}

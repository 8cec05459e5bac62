/**
 * Admission on a follower: a request for a unit scaled to zero waits, or —
 * with max_pending_tasks 0, when nothing may wait — is refused with 503
 * `starting`; either way the follower's load report tells the leader, whose
 * autoscaler then starts a container (for the waiting request, or the retry).
 */
import assert from 'node:assert/strict';
import { LoadReporter } from '../../../../core/traffic/cluster/load-report.js';
import { PeerLoad } from '../../../../core/traffic/cluster/peer-load.js';
import { replicaSupervisor } from '../../../../core/traffic/cluster/replica-supervisor.js';
import { Admission, type UnitSupervisor } from '../../../../core/traffic/gateway/admission.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { StateStore } from '../../../../core/model/store/types.js';
import { until } from '../../../helpers/until.js';

const UNIT = 'default/app/deployed/w';
/** The follower's own autoscaler: it manages nothing (only the leader's deploys units). */
const idleAutoscaler: UnitSupervisor = {
  manages: () => false,
  queued: () => {},
  refused: () => {},
  refusal: () => null,
  waitError: () => {
    throw new Error('not asked on a follower');
  },
};

describe('replicaSupervisor() on a follower', () => {
  let store: StateStore;
  let admission: Admission;
  let reporter: LoadReporter;
  let peers: PeerLoad;
  const reports: unknown[] = [];

  beforeEach(async () => {
    store = createMemoryStateStore();
    const registry = createEmbeddedRegistry(); // no instance: the unit is at zero
    admission = new Admission(registry, { waitTimeoutMs: 60_000 });
    reporter = new LoadReporter({
      store,
      replicaId: 'follower',
      admission,
      registry,
      units: () => [UNIT],
      report: (error) => reports.push(error),
    });
    admission.supervise(
      replicaSupervisor({
        autoscaler: idleAutoscaler,
        leads: () => false,
        notice: (unit, refused) => reporter.notice(unit, refused),
        hasInstances: () => false,
      }),
    );
    peers = new PeerLoad({ store, self: 'leader', report: (error) => reports.push(error) });
    await peers.start();
  });
  afterEach(async () => {
    await peers.close();
    await reporter.close();
    admission.close();
    await store.close();
    assert.deepEqual(reports, []);
  });

  it('queues a request for a unit at zero and the leader sees it queued', async () => {
    const controller = new AbortController();
    const waiting = admission.enter(UNIT, { maxPending: 5 }, controller.signal).catch((error: { code: string }) => error.code);
    await until('the leader sees the queued request', () => peers.load(UNIT).queued === 1, 5_000);
    controller.abort();
    assert.equal(await waiting, 'client_closed');
  });

  it('refuses a request that may not wait (max_pending_tasks 0) with 503 starting, and the leader still sees the demand', async () => {
    const refused = await admission.enter(UNIT, { maxPending: 0 }, new AbortController().signal).then(
      () => null,
      (error: { code: string }) => error.code,
    );
    assert.equal(refused, 'starting');
    await until('the leader sees one request wanting the unit', () => peers.load(UNIT).queued === 1, 5_000);
  });
});

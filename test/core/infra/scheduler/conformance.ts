/**
 * The SchedulerDriver conformance suite: what every driver (local, Nomad)
 * must show, checked against the contract in core/infra/scheduler/types.ts. `setup`
 * returns a fresh driver and a way to build units it can run; the suite
 * closes the driver (unless a test did) and calls `cleanup` after each test.
 *
 * Fixture contract for `unit(name, scaling?)`: a unit whose key ends in
 * `name`, 1 worker and at most 3 containers unless `scaling` says
 * otherwise, that becomes healthy within seconds — except when `name`
 * starts with `broken`: then its containers cannot start; each prints
 * `boom: <name> cannot start` to stderr and exits.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SvcError } from '../../../../core/model/errors.js';
import type { ContainerStatus, DeploymentUnit, SchedulerDriver } from '../../../../core/infra/scheduler/types.js';
import type { ScalingSpec } from '../../../../core/model/workload/types.js';

export interface DriverCapabilities {
  /**
   * `stop(key, id)` stops exactly the container it names. False for Nomad:
   * a count decrement stops the highest-indexed allocation (see its driver's doc).
   */
  readonly exactStop: boolean;
  /** `close()` stops the containers (local). False for Nomad: jobs keep running when svc stops. */
  readonly closeStopsContainers: boolean;
  /** `submit` of a new unit starts its min_containers (Nomad: `Count` ≥ `Scaling.Min`); else it starts nothing. */
  readonly submitStartsMinimum: boolean;
}

export interface DriverFixture {
  readonly driver: SchedulerDriver;
  unit(name: string, scaling?: Partial<ScalingSpec>): DeploymentUnit;
  readonly capabilities: DriverCapabilities;
  /**
   * Containers of the unit that run, seen from outside the driver (not its
   * `status()`): local, the containers whose processes are alive; Nomad,
   * the allocations Nomad lists that have not ended.
   */
  running(key: string): Promise<number>;
  /** Every container the unit ever had, ended ones included, seen from outside `status()`. */
  started(key: string): Promise<number>;
  /** Processes this driver itself started that are alive (none for Nomad: Nomad starts them). */
  processes(): number[];
  cleanup?(): Promise<void>;
}

/** The checks, by name, for `defects`. */
export type ConformanceCheck =
  | 'submit'
  | 'submit-min-containers'
  | 'scale-healthy'
  | 'scale-starting-sync'
  | 'scale-twice'
  | 'scale-down'
  | 'stop'
  | 'stop-idempotent'
  | 'failure'
  | 'remove'
  | 'remove-idempotent'
  | 'status-unknown'
  | 'close';

export interface ConformanceOptions {
  /**
   * Checks this driver is known to fail, each with the defect (said in a
   * `// DEFECT:` comment where the driver's suite is declared). They are
   * declared with `it.skip`, so that they show as pending until fixed.
   */
  readonly defects?: Partial<Record<ConformanceCheck, string>>;
}

const BOOM = (name: string) => `boom: ${name} cannot start`;

/** Alive and not a zombie (an exited process its parent has not reaped yet). */
function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function pidsOf(containers: readonly ContainerStatus[]): number[] {
  return containers.flatMap((c) => [c.pid, ...c.workers.map((w) => w.pid)]).filter((pid): pid is number => pid !== undefined);
}

function states(driver: SchedulerDriver, key: string): string[] {
  return driver.status(key).map((c) => c.state);
}

export function describeDriverConformance(name: string, setup: () => Promise<DriverFixture>, options: ConformanceOptions = {}): void {
  describe(`SchedulerDriver conformance: ${name}`, function () {
    this.timeout(60_000);
    let fixture: DriverFixture;
    let driver: SchedulerDriver;
    let closed: boolean;
    beforeEach(async () => {
      fixture = await setup();
      driver = fixture.driver;
      closed = false;
    });
    afterEach(async () => {
      if (!closed) await driver.close();
      await fixture.cleanup?.();
    });

    const check = (id: ConformanceCheck, title: string, fn: () => Promise<void>) => (options.defects?.[id] ? it.skip : it)(title, fn);

    check('submit', 'submit starts nothing; a second submit (a redeploy) is fine, and the unit then scales', async () => {
      const unit = fixture.unit('web');
      await driver.submit(unit);
      assert.deepEqual(driver.status(unit.key), []);
      assert.equal(await fixture.running(unit.key), 0);
      await driver.submit({ ...unit, workload: { ...unit.workload, doc: 'second version' } });
      assert.deepEqual(driver.status(unit.key), []);
      assert.equal(await fixture.running(unit.key), 0);
      await driver.scale(unit.key, 1);
      assert.deepEqual(states(driver, unit.key), ['healthy']);
    });

    check(
      'submit-min-containers',
      'submit starts nothing by itself but the floor the scheduler keeps (min_containers on Nomad)',
      async () => {
        const unit = fixture.unit('floor', { autoscaler: { minContainers: 1, maxContainers: 3, tasksPerContainer: 1 } });
        await driver.submit(unit);
        const floor = fixture.capabilities.submitStartsMinimum ? 1 : 0;
        assert.equal(await fixture.started(unit.key), floor);
        if (floor === 0) assert.deepEqual(driver.status(unit.key), []);
        // Scaling to the floor starts no other container.
        await driver.scale(unit.key, 1);
        assert.deepEqual(states(driver, unit.key), ['healthy']);
        assert.equal(await fixture.started(unit.key), 1);
      },
    );

    check('scale-healthy', 'scale(n) resolves once n containers are healthy and registered, each with its workers', async () => {
      const unit = fixture.unit('api', { workers: 2 });
      await driver.submit(unit);
      await driver.scale(unit.key, 2);
      const status = driver.status(unit.key);
      assert.deepEqual(
        status.map((c) => c.state),
        ['healthy', 'healthy'],
      );
      assert.equal(new Set(status.map((c) => c.id)).size, 2, 'each container has its own id');
      for (const container of status) {
        assert.equal(container.unit, unit.key);
        assert.ok(container.healthyAt instanceof Date, 'a healthy container says since when');
        assert.ok(container.healthyAt >= container.startedAt, 'healthy after it started');
        assert.deepEqual(
          container.workers.map((w) => w.index),
          [0, 1],
          'one WorkerStatus per worker of the workload',
        );
        assert.ok(
          container.workers.every((w) => w.registered),
          'scale resolves once the workers are registered',
        );
      }
      const instanceIds = status.flatMap((c) => c.workers.map((w) => w.instanceId));
      assert.equal(new Set(instanceIds).size, 4, `an instance id per worker: ${instanceIds.join(', ')}`);
      assert.equal(await fixture.running(unit.key), 2);
    });

    check('scale-starting-sync', 'containers scale adds show in status() as starting before it returns to the event loop', async () => {
      const unit = fixture.unit('eager');
      await driver.submit(unit);
      const scaling = driver.scale(unit.key, 2);
      const seen = driver.status(unit.key); // same turn of the event loop as the call
      await scaling;
      assert.deepEqual(
        seen.map((c) => c.state),
        ['starting', 'starting'],
      );
      assert.deepEqual(states(driver, unit.key), ['healthy', 'healthy']);
    });

    check('scale-twice', 'two scale calls in a row to the same count never start extra containers', async () => {
      const unit = fixture.unit('twice');
      await driver.submit(unit);
      await Promise.all([driver.scale(unit.key, 2), driver.scale(unit.key, 2)]);
      assert.deepEqual(states(driver, unit.key), ['healthy', 'healthy']);
      assert.equal(await fixture.running(unit.key), 2);
      assert.equal(await fixture.started(unit.key), 2, 'no container was started (and stopped) beyond the two');
      await driver.scale(unit.key, 2);
      assert.equal(await fixture.started(unit.key), 2, 'scale to the current count starts nothing');
    });

    check('scale-down', 'scale down to fewer containers ends with that many, and to 0 with none', async () => {
      const unit = fixture.unit('shrink');
      await driver.submit(unit);
      await driver.scale(unit.key, 3);
      assert.equal(driver.status(unit.key).length, 3);
      await driver.scale(unit.key, 1);
      assert.deepEqual(states(driver, unit.key), ['healthy']);
      assert.equal(await fixture.running(unit.key), 1);
      await driver.scale(unit.key, 0);
      assert.deepEqual(driver.status(unit.key), []);
      assert.equal(await fixture.running(unit.key), 0);
    });

    check('stop', 'stop(key, id) lowers the count by exactly one and resolves once the container has exited', async () => {
      const unit = fixture.unit('stoppable');
      await driver.submit(unit);
      await driver.scale(unit.key, 2);
      const before = driver.status(unit.key);
      const [target] = before;
      // The first: scale down (and Nomad's count decrement) would have picked the last.
      await driver.stop(unit.key, target!.id);
      const after = driver.status(unit.key);
      assert.equal(after.length, 1);
      assert.equal(after[0]!.state, 'healthy', 'the other container keeps serving');
      assert.equal(await fixture.running(unit.key), 1);
      const stopped = before.find((c) => !after.some((a) => a.id === c.id));
      assert.ok(stopped, 'one of the two containers is gone from status()');
      if (fixture.capabilities.exactStop) assert.equal(stopped.id, target!.id, 'the container it named stopped');
      assert.deepEqual(pidsOf([stopped]).filter(alive), [], 'its processes have exited');
    });

    check(
      'stop-idempotent',
      'stop of an unknown container, an already stopped one or an unknown unit resolves and stops nothing',
      async () => {
        const unit = fixture.unit('repeat');
        await driver.submit(unit);
        await driver.scale(unit.key, 2);
        const before = driver.status(unit.key);
        await driver.stop(unit.key, before[1]!.id);
        const stopped = before.find((c) => !driver.status(unit.key).some((a) => a.id === c.id))!;
        await driver.stop(unit.key, stopped.id);
        await driver.stop(unit.key, 'no-such-container');
        await driver.stop('default/nothing/preview@1/none', before[0]!.id);
        assert.equal(driver.status(unit.key).length, 1);
        assert.equal(await fixture.running(unit.key), 1);
        assert.equal(await fixture.started(unit.key), 2);
      },
    );

    check('failure', 'a container that cannot start rejects scale with container_failed and its last log lines', async () => {
      const unit = fixture.unit('broken');
      await driver.submit(unit);
      let caught: unknown;
      await driver.scale(unit.key, 1).catch((error: unknown) => {
        caught = error;
      });
      assert.ok(caught instanceof SvcError, `scale rejects with an SvcError, not ${String(caught)}`);
      assert.equal(caught.code, 'container_failed', caught.message);
      const carried = caught.message.includes(BOOM('broken')) || JSON.stringify(caught.details ?? null).includes(BOOM('broken'));
      assert.ok(carried, `the error carries the container's last log lines: ${caught.message} ${JSON.stringify(caught.details)}`);
      assert.deepEqual(
        driver.status(unit.key).filter((c) => c.state === 'healthy'),
        [],
      );
    });

    check('remove', 'remove stops every container and forgets the unit', async () => {
      const unit = fixture.unit('gone');
      await driver.submit(unit);
      await driver.scale(unit.key, 2);
      const pids = pidsOf(driver.status(unit.key));
      await driver.remove(unit.key);
      assert.deepEqual(driver.status(unit.key), []);
      assert.equal(await fixture.running(unit.key), 0);
      assert.deepEqual(pids.filter(alive), [], 'their processes have exited');
      let caught: unknown;
      await driver.scale(unit.key, 1).catch((error: unknown) => {
        caught = error;
      });
      assert.ok(caught instanceof SvcError && caught.code === 'not_found', `scale of a removed unit is not_found, not ${String(caught)}`);
      assert.equal(await fixture.running(unit.key), 0);
    });

    check('remove-idempotent', 'remove twice, and remove of an unknown key, resolve', async () => {
      const unit = fixture.unit('twice-gone');
      await driver.submit(unit);
      await driver.scale(unit.key, 1);
      await driver.remove(unit.key);
      await driver.remove(unit.key);
      await driver.remove('default/nothing/preview@1/none');
      assert.deepEqual(driver.status(unit.key), []);
      assert.equal(await fixture.running(unit.key), 0);
    });

    check('status-unknown', 'status of an unknown key is []', async () => {
      assert.deepEqual(driver.status('default/nothing/preview@1/none'), []);
      const unit = fixture.unit('known');
      await driver.submit(unit);
      assert.deepEqual(driver.status('default/nothing/preview@1/none'), []);
    });

    check('close', 'close() resolves and leaves no process of its own running (the containers too, where it stops them)', async () => {
      const unit = fixture.unit('closing', { workers: 2 });
      await driver.submit(unit);
      await driver.scale(unit.key, 1);
      const pids = pidsOf(driver.status(unit.key));
      closed = true;
      await driver.close();
      assert.deepEqual(fixture.processes(), [], 'no process the driver started is alive');
      assert.deepEqual(pids.filter(alive), [], 'no container process it reported is alive');
      assert.equal(await fixture.running(unit.key), fixture.capabilities.closeStopsContainers ? 0 : 1);
    });
  });
}

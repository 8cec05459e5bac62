import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SvcError } from '../../../core/errors.js';
import type { BuiltImage } from '../../../core/images/types.js';
import { createNomadDriver, type NomadDriverOptions } from '../../../core/scheduler/nomad/driver.js';
import type { NomadDriver, NomadJobSpec } from '../../../core/scheduler/nomad/types.js';
import type { DeploymentUnit } from '../../../core/scheduler/types.js';
import type { ScalingSpec, Workload } from '../../../core/workload/types.js';
import { pidsMatching, waitNoneMatching } from '../../helpers/processes.js';
import { startNomadStandin, type NomadStandin } from '../../standins/nomad/index.js';

const S = 1_000_000_000;
/** In every fixture task's command line, so that the test can find (and miss) its processes. */
const MARKER = `svc-nomad-driver-test-${randomBytes(4).toString('hex')}`;

/**
 * The container of the fixture job: one HTTP server per worker, on `NOMAD_PORT_w<i>`,
 * answering 200 on /_svc/health. With FIXTURE_FAIL set it prints to both streams and exits 1.
 */
const CONTAINER_JS = [
  `// ${MARKER}`,
  "const http=require('http');",
  "if(process.env.FIXTURE_FAIL){console.log('starting');console.error('boom: '+process.env.FIXTURE_FAIL);process.exit(1)}",
  'const n=Number(process.env.SVC_WORKERS);',
  "for(let i=0;i<n;i++){const port=Number(process.env['NOMAD_PORT_w'+i]);",
  "http.createServer((q,r)=>{r.statusCode=q.url==='/_svc/health'?200:404;r.end('w'+i)}).listen(port,'127.0.0.1',()=>console.log('worker '+i+' on '+port))}",
].join('\n');

/**
 * TEST FIXTURE standing in for the real job compiler (jobs/ compileJob): a small but valid raw_exec
 * job per unit — one group, `Update.MaxParallel = 0`, a Scaling block from the unit's autoscaler
 * bounds, one dynamic port `w<i>` per worker, a node task serving the health route on each.
 */
function fixtureCompile(unit: DeploymentUnit): { Job: NomadJobSpec } {
  const { workers, autoscaler } = unit.workload.scaling;
  const env: Record<string, string> = { SVC_WORKERS: String(workers), SVC_UNIT: unit.key };
  if (unit.workload.name.startsWith('broken')) env.FIXTURE_FAIL = `${unit.workload.name} cannot start`;
  return {
    Job: {
      ID: 'replaced-by-the-driver',
      Name: unit.key,
      Type: 'service',
      Datacenters: ['dc1'],
      Meta: { svc_workload: unit.workload.name, svc_doc: unit.workload.doc ?? '' },
      TaskGroups: [{
        Name: 'workload',
        Count: autoscaler.minContainers,
        Update: { MaxParallel: 0 },
        Scaling: { Min: autoscaler.minContainers, Max: autoscaler.maxContainers, Enabled: true, Type: 'horizontal' },
        RestartPolicy: { Attempts: 0, Delay: 1 * S, Interval: 10 * S, Mode: 'fail' },
        Networks: [{ DynamicPorts: Array.from({ length: workers }, (_, i) => ({ Label: `w${i}` })) }],
        Tasks: [{
          Name: 'runtime',
          Driver: 'raw_exec',
          Config: { command: process.execPath, args: ['-e', CONTAINER_JS] },
          Env: env,
          KillTimeout: 2 * S,
        }],
      }],
    },
  };
}

const image: BuiltImage = { key: 'none', imageId: 'img', pythonPath: '/nonexistent/python', path: '/nonexistent' } as BuiltImage;

function unit(name: string, scaling: Partial<ScalingSpec> = {}, doc: string | null = null): DeploymentUnit {
  const workload: Workload = {
    app: 'demo', name, kind: 'endpoint', handler: name, onStart: null, doc,
    image: { id: 'img', pythonVersion: '', pythonPackages: [] },
    resources: { cpu: 1, memoryMiB: 512 },
    http: { route: `/${name}`, methods: ['GET'], authorized: false, domain: null },
    scaling: { workers: 2, concurrency: 1, maxPendingTasks: 100, keepWarmSeconds: 60, checkpointEnabled: false, autoscaler: { minContainers: 0, maxContainers: 3, tasksPerContainer: 1 }, ...scaling },
    parameters: null, returns: null,
  };
  return { key: `default/demo/preview@1/${name}`, ref: { workspace: 'default', app: 'demo', stage: 'preview' }, workload, image, source: { root: '/nonexistent', entry: 'app' } };
}

async function nomadGet(nomad: NomadStandin, p: string, token?: string): Promise<{ status: number; text: string; json: () => any }> {
  const response = await fetch(nomad.url + p, { headers: token ? { 'X-Nomad-Token': token } : {} });
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) };
}

async function rejects(promise: Promise<unknown>, code: string, text?: RegExp): Promise<SvcError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SvcError, `not an SvcError: ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (text) assert.match(error.message, text);
    return error;
  }
  assert.fail(`expected ${code}`);
}

describe('Nomad driver (against the Nomad stand-in)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let nomad: NomadStandin;
  let driver: NomadDriver;
  const extra: NomadDriver[] = [];

  function makeDriver(overrides: Partial<NomadDriverOptions> = {}): NomadDriver {
    const made = createNomadDriver({ url: nomad.url, compile: fixtureCompile, healthTimeoutMs: 30_000, stopTimeoutMs: 30_000, blockingWaitMs: 5_000, ...overrides });
    extra.push(made);
    return made;
  }

  async function start(aclToken?: string): Promise<void> {
    nomad = await startNomadStandin({ dataDir, ...(aclToken ? { aclToken } : {}) });
  }

  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nomad-driver-'));
    await start();
    driver = makeDriver();
  });

  afterEach(async () => {
    await Promise.all(extra.splice(0).map((d) => d.close()));
    await nomad.close();
    rmSync(dataDir, { recursive: true, force: true });
    assert.deepEqual(await waitNoneMatching(MARKER, 10_000), [], 'fixture processes outlived the stand-in');
  });

  it('maps unit keys to valid job IDs and keeps the key in Meta', async () => {
    assert.equal(driver.jobId('default/demo/deployed/greet'), 'svc-default--demo--greet');
    assert.equal(driver.jobId('default/demo/preview@7/greet_me'), 'svc-default--demo--greet-me--preview--s7');
    const long = driver.jobId(`default/${'a'.repeat(40)}/deployed@3/${'b'.repeat(40)}`);
    assert.match(long, /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
    assert.ok(long.length <= 63);
    assert.notEqual(long, driver.jobId(`default/${'a'.repeat(40)}/deployed@4/${'b'.repeat(40)}`), 'the hash tells long IDs apart');
    const u = unit('meta');
    await driver.submit(u);
    const job = (await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}`)).json();
    assert.equal(job.Meta.svc_unit, u.key);
  });

  it('submit registers the job; a re-submit uses check-and-set and keeps the scaled count (PreserveCounts)', async () => {
    const u = unit('api');
    await driver.submit(u);
    const id = driver.jobId(u.key);
    const first = (await nomadGet(nomad, `/v1/job/${id}`)).json();
    assert.equal(first.ID, id);
    assert.equal(first.TaskGroups[0].Count, 0);
    assert.equal(first.Version, 0);
    await driver.scale(u.key, 1);
    // A new version of the unit (its doc changed): registered over the current JobModifyIndex.
    await driver.submit(unit('api', {}, 'second version'));
    const second = (await nomadGet(nomad, `/v1/job/${id}`)).json();
    assert.equal(second.Version, 2, 'the scale was version 1, the re-submit version 2');
    assert.equal(second.Meta.svc_doc, 'second version');
    assert.equal(second.TaskGroups[0].Count, 1, 'PreserveCounts kept the count the scale set');
  });

  it('scale to 2 waits until both allocations are healthy; status shows them with their workers\' ports', async () => {
    const u = unit('web');
    await driver.submit(u);
    await driver.scale(u.key, 2);
    const status = driver.status(u.key);
    assert.equal(status.length, 2);
    for (const container of status) {
      assert.equal(container.state, 'healthy');
      assert.ok(container.healthyAt instanceof Date);
      assert.deepEqual(container.workers.map((w) => w.label), ['w0', 'w1']);
      for (const worker of container.workers) {
        assert.equal(worker.instanceId, `_nomad-task-${container.id}-runtime-${driver.jobId(u.key)}-w${worker.index}`, 'the ID Nomad gives the worker\'s Consul service');
        const response = await fetch(`http://${worker.address}/_svc/health`);
        assert.equal(response.status, 200);
        assert.equal(await response.text(), `w${worker.index}`);
      }
    }
    const allocs = (await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}/allocations`)).json();
    assert.deepEqual(allocs.filter((a: any) => a.ClientStatus === 'running').map((a: any) => a.ID).sort(), status.map((c) => c.id).sort());
  });

  it('scale beyond the group\'s Max gives Nomad\'s text as nomad_rejected', async () => {
    const u = unit('capped');
    await driver.submit(u);
    const error = await rejects(driver.scale(u.key, 5), 'nomad_rejected', /group count was greater than scaling policy maximum: 5 > 3/);
    assert.equal((error.details as any).status, 400);
  });

  it('scale of a unit Nomad does not know is not_found', async () => {
    await rejects(driver.scale('default/demo/preview@1/nothing', 1), 'not_found', /no deployment unit default\/demo\/preview@1\/nothing: Nomad answered 404 to GET \/v1\/job\/svc-default--demo--nothing--preview--s1: job not found/);
  });

  it('a container that exits gives container_failed with its last log lines', async () => {
    const u = unit('broken', { workers: 1 });
    await driver.submit(u);
    const error = await rejects(driver.scale(u.key, 1), 'container_failed', /boom: broken cannot start/);
    assert.match(error.message, /\[stdout\] starting/);
  });

  it('stop of one container stops that allocation and lowers the count', async () => {
    const u = unit('stoppable', { workers: 1 });
    await driver.submit(u);
    await driver.scale(u.key, 2);
    const [, second] = driver.status(u.key);
    assert.ok(second && second.allocationName.endsWith('[1]'));
    const port = second.workers[0]!.port;
    await driver.stop(u.key, second.id);
    assert.deepEqual(driver.status(u.key).map((c) => c.id).includes(second.id), false);
    assert.equal(driver.status(u.key).length, 1);
    const job = (await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}`)).json();
    assert.equal(job.TaskGroups[0].Count, 1);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/_svc/health`));
    await driver.stop(u.key, second.id); // idempotent
    await driver.stop(u.key, 'no-such-allocation');
  });

  it('remove purges the job (404 after) and its processes end; a second remove is fine', async () => {
    const u = unit('gone', { workers: 1 });
    await driver.submit(u);
    await driver.scale(u.key, 1);
    assert.ok(pidsMatching(MARKER).length > 0);
    await driver.remove(u.key);
    assert.equal((await nomadGet(nomad, `/v1/job/${driver.jobId(u.key)}`)).status, 404);
    assert.deepEqual(await waitNoneMatching(MARKER, 10_000), []);
    assert.deepEqual(driver.status(u.key), []);
    await driver.remove(u.key);
  });

  it('retries once when the job was registered behind its back (EnforceIndex conflict)', async () => {
    const u = unit('raced');
    await driver.submit(u);
    const id = driver.jobId(u.key);
    // Someone else registers a new version between the driver's read and its write.
    let raced = false;
    const racing = makeDriver();
    const original = globalThis.fetch;
    globalThis.fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (!raced && init?.method === 'PUT' && url.includes(`/v1/job/${id}`)) {
        raced = true;
        const behind = fixtureCompile(unit('raced', {}, 'behind the driver\'s back')).Job;
        const reply = await original(`${nomad.url}/v1/job/${id}`, { method: 'PUT', body: JSON.stringify({ Job: { ...behind, ID: id } }) });
        assert.equal(reply.status, 200, await reply.text());
      }
      return original(input, init);
    };
    try {
      await racing.submit(unit('raced', {}, 'the driver\'s version'));
    } finally {
      globalThis.fetch = original;
    }
    assert.ok(raced);
    const job = (await nomadGet(nomad, `/v1/job/${id}`)).json();
    assert.equal(job.Meta.svc_doc, 'the driver\'s version');
    assert.equal(job.Version, 2);
  });

  it('sends the ACL token; without it, or with a wrong one, Nomad\'s 403 is forbidden', async () => {
    await nomad.close();
    await start('s3cret-token');
    const withToken = makeDriver({ token: 's3cret-token' });
    const u = unit('secured', { workers: 1 });
    await withToken.submit(u);
    await withToken.scale(u.key, 1);
    assert.equal(withToken.status(u.key).length, 1);
    await rejects(makeDriver().submit(u), 'forbidden', /Permission denied/);
    await rejects(makeDriver({ token: 'wrong' }).scale(u.key, 0), 'forbidden', /ACL token not found/);
    await withToken.remove(u.key);
  });

  it('an unreachable Nomad is scheduler_unreachable', async () => {
    const dead = createNomadDriver({ url: 'http://127.0.0.1:1', compile: fixtureCompile });
    extra.push(dead);
    const error = await rejects(dead.submit(unit('nowhere')), 'scheduler_unreachable', /cannot reach Nomad at http:\/\/127\.0\.0\.1:1/);
    assert.equal(error.status, 503);
  });

  it('close stops watching but never stops or purges jobs', async () => {
    const u = unit('survivor', { workers: 1 });
    const own = makeDriver();
    await own.submit(u);
    await own.scale(u.key, 1);
    await own.close();
    const allocs = (await nomadGet(nomad, `/v1/job/${own.jobId(u.key)}/allocations`)).json();
    assert.equal(allocs.filter((a: any) => a.ClientStatus === 'running').length, 1);
    // A new driver (svc restarted) picks the unit up from Nomad.
    const next = makeDriver();
    await next.scale(u.key, 1);
    assert.equal(next.status(u.key).length, 1);
  });
});

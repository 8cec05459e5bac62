/**
 * Scheduled functions on the embedded platform, over real HTTP with real
 * Python workers: a function scheduled every second runs again and again
 * (each run appends to a file), never overlaps itself (ticks during a run
 * are recorded skipped), records a failure with its error and traceback, reads
 * the secrets it names from its environment, and
 * stops when a redeploy removes its schedule or the app is paused.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { appRuns } from '../../cli/commands/app-runs.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { assertTicksOnce, scheduledRuns, scheduleFixture, secretLines, type ScheduleFixture } from './schedule-helpers.js';

describe('scheduled functions (embedded platform)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let fixture: ScheduleFixture;
  const reports: unknown[] = [];

  const deploy = async (functions: readonly string[], change?: (workload: any) => void) => {
    const deployed = await call('POST', '/api/v1/apps/sched/deployments', { token: owner, json: fixture.body(functions, change) });
    assert.equal(deployed.status, 201, deployed.text);
  };
  /** Waits until no run of the app is running, so that a count taken now is final. */
  const settled = () =>
    until('no scheduled run is running', async () => (await scheduledRuns(call, owner)).runs.every((run) => run.status !== 'running'));

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    fixture = await scheduleFixture(platform.url, owner);
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('runs a function scheduled every second again and again; each run is listed with its status, and its logs are kept', async () => {
    await deploy(['tick']);
    const succeededRuns = async () => (await scheduledRuns(call, owner)).runs.filter((run) => run.status === 'succeeded').length;
    await until('tick ran three times', async () => (await succeededRuns()) >= 3, 60_000);
    const { schedules, runs } = await scheduledRuns(call, owner);
    assert.ok(fixture.lines('tick').length >= 3, 'each succeeded run appended its line');
    assert.deepEqual(
      schedules.map(({ function: fn, schedule, description }) => ({ fn, schedule, description })),
      [{ fn: 'tick', schedule: { every: 1, overlap: false }, description: 'every 1s' }],
    );
    assert.ok(schedules[0]!.nextRunAt !== null && Date.parse(schedules[0]!.nextRunAt) > 0);
    const succeeded = runs.filter((run) => run.status === 'succeeded');
    assert.ok(succeeded.length >= 3, JSON.stringify(runs));
    assert.ok(
      runs.every((run, i) => i === 0 || runs[i - 1]!.id > run.id),
      'newest first',
    );
    for (const run of succeeded) {
      assert.equal(run.function, 'tick');
      assert.ok(run.startedAt! >= run.scheduledAt && run.endedAt! >= run.startedAt!, JSON.stringify(run));
      assert.equal(typeof run.durationMs, 'number');
      assert.equal(run.error, null);
    }
    assertTicksOnce(runs);
    const one = await call('GET', `/api/v1/apps/sched/runs/${succeeded[0]!.id}`, { token: owner });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(
      one.json.run.logs.map((line: { stream: string; text: string }) => [line.stream, line.text]),
      [['stdout', 'tick ran']],
    );
    assert.equal((await call('GET', '/api/v1/apps/sched/runs/sched-0000000000000-abcdef', { token: owner })).status, 404);
    assert.equal((await call('GET', '/api/v1/apps/sched/runs/nope', { token: owner })).status, 400);
    assert.equal((await call('GET', '/api/v1/apps/other/runs', { token: owner })).status, 404);
  });

  it("svc app runs lists the schedules and the runs (--json: the API answer), and --logs prints one run's output", async () => {
    const env = { SVC_SERVER: platform.url, SVC_TOKEN: owner };
    const table = capture({ env });
    await appRuns(table.context, 'sched');
    assert.match(table.stderr(), /tick: every 1s, next \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/);
    const lines = table.stdout().trim().split('\n');
    assert.match(lines[0]!, /^RUN\s+FUNCTION\s+STATUS\s+SCHEDULED\s+DURATION\s+ERROR$/);
    assert.match(
      lines.find((line) => / succeeded /.test(line)) ?? '',
      /^sched-\d{13}-[0-9a-f]{6}\s+tick\s+succeeded\s+\S+ \S+Z\s+\d+\.\ds/,
    );
    const json = capture({ env });
    await appRuns(json.context, 'sched', { json: true });
    const printed = JSON.parse(json.stdout());
    assert.deepEqual(Object.keys(printed), ['schedules', 'runs']);
    const id = printed.runs.find((run: { status: string }) => run.status === 'succeeded').id as string;
    const logs = capture({ env });
    await appRuns(logs.context, 'sched', { logs: id });
    assert.equal(logs.stdout(), 'tick ran\n');
    assert.match(logs.stderr(), new RegExp(`tick ${id}: succeeded`));
  });

  it('never runs a function twice at once: ticks that come while it runs are recorded skipped', async () => {
    await deploy(['slow']);
    await until('slow ran twice', () => fixture.lines('slow-end').length >= 2, 60_000);
    await settled();
    const [starts, ends] = [fixture.lines('slow-start'), fixture.lines('slow-end')];
    // Each run started after the previous one ended.
    starts.slice(1).forEach((start, i) => {
      assert.ok(start >= ends[i]!, `run ${i + 2} started at ${start}, before run ${i + 1} ended at ${ends[i]}`);
    });
    const runs = (await scheduledRuns(call, owner)).runs.filter((run) => run.function === 'slow');
    assert.ok(
      runs.some((run) => run.status === 'skipped'),
      JSON.stringify(runs),
    );
    for (const run of runs.filter((r) => r.status === 'skipped'))
      assert.deepEqual([run.startedAt, run.endedAt, run.error], [null, null, null]);
    assertTicksOnce(runs);
  });

  it('records a run whose function raised as failed, with the exception and the traceback in its logs', async () => {
    await deploy(['boom']);
    const failed = await until(
      'boom failed once',
      async () => (await scheduledRuns(call, owner)).runs.find((run) => run.function === 'boom' && run.status === 'failed'),
      60_000,
    );
    assert.deepEqual(failed.error, { code: null, message: 'ValueError: scheduled failure' });
    const { run } = (await call('GET', `/api/v1/apps/sched/runs/${failed.id}`, { token: owner })).json;
    assert.deepEqual(run.logs[0], { time: run.logs[0].time, stream: 'stdout', text: 'about to fail' });
    assert.match(run.logs.at(-1).text, /Traceback[\s\S]*raise ValueError\("scheduled failure"\)/);

    // The dashboard's app page shows it in its "Scheduled runs" section, and links to its logs.
    const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    const get = async (p: string) => (await fetch(`${platform.url}${p}`, { headers: { Cookie: `svc_session=${secret}` } })).text();
    const appPage = await get('/dashboard/apps/sched');
    assert.match(appPage, /<h2 id="scheduled-runs">Scheduled runs<\/h2>/);
    assert.match(appPage, /<code>boom<\/code>: every 1s; next run <time/);
    assert.match(appPage, /<span class="status bad">failed<\/span><\/td>\s*<td>[^<]*<\/td><td>ValueError: scheduled failure<\/td>/);
    assert.ok(appPage.includes(`href="/dashboard/apps/sched/runs/${failed.id}"`));
    const runPage = await get(`/dashboard/apps/sched/runs/${failed.id}`);
    assert.match(runPage, /stdout: about to fail/);
    assert.match(runPage, /raise ValueError\(&quot;scheduled failure&quot;\)|raise ValueError\(&#34;scheduled failure&#34;\)/);
  });

  it('gives a scheduled function the secrets it names, named and inline, in its environment', async () => {
    const value = `sched-${randomBytes(8).toString('hex')}`;
    assert.equal(
      (await call('POST', '/api/v1/secrets', { token: owner, json: { name: 'sched-secret', values: { SCHED_SECRET: value } } })).status,
      201,
    );
    await deploy(['secret-tick']);
    const read = await until('secret_tick read its secrets', () => secretLines(fixture)[0], 60_000);
    assert.equal(read, `${value} inline # value`);
    // A changed value reaches the next tick, with no deploy: each tick starts with the values stored then.
    const changed = `changed-${randomBytes(8).toString('hex')}`;
    assert.equal(
      (await call('PATCH', '/api/v1/secrets/sched-secret', { token: owner, json: { values: { SCHED_SECRET: changed } } })).status,
      200,
    );
    await until('a tick read the changed value', () => secretLines(fixture).includes(`${changed} inline # value`), 60_000);
    const runs = (await scheduledRuns(call, owner)).runs.filter((run) => run.function === 'secret-tick');
    assert.ok(runs.length > 0 && runs.every((run) => run.status !== 'failed'), JSON.stringify(runs));
  });

  it('stops when a redeploy removes the schedule, and when the app is paused', async () => {
    await deploy(['tick']);
    await until(
      'tick runs again',
      async () => (await scheduledRuns(call, owner)).runs.filter((r) => r.function === 'tick' && r.status === 'succeeded').length >= 4,
      60_000,
    );
    await deploy(['tick'], (workload) => (workload.options.schedule = null));
    assert.deepEqual((await scheduledRuns(call, owner)).schedules, []);
    await settled();
    const afterRemoval = fixture.lines('tick').length;
    await sleep(2500); // ticks that would have come
    assert.equal(fixture.lines('tick').length, afterRemoval, 'no run after the schedule went');

    await deploy(['tick']);
    const ran = fixture.lines('tick').length;
    await until('tick runs once more', () => fixture.lines('tick').length > ran, 60_000);
    assert.equal((await call('POST', '/api/v1/apps/sched/pause', { token: owner })).status, 200);
    assert.equal((await scheduledRuns(call, owner)).schedules[0]!.nextRunAt, null);
    await settled();
    const afterPause = fixture.lines('tick').length;
    await sleep(2500);
    assert.equal(fixture.lines('tick').length, afterPause, 'no run while paused');
    assertTicksOnce((await scheduledRuns(call, owner)).runs);
  });
});

import { until } from '../helpers/until.js';
import assert from 'node:assert/strict';
import path from 'node:path';
import { appDelete, appList, appPause, appResume } from '../../cli/commands/app.js';
import deploy from '../../cli/commands/deploy.js';
import { deploymentDelete, deploymentList, deploymentStop } from '../../cli/commands/deployment.js';
import logs from '../../cli/commands/logs.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { answer, fixture } from '../e2e/lifecycle-helpers.js';
import { capture, rejectsWith } from './fixture.js';

const lifecycle = (version: string) => path.join(fixture(version), 'app.py');
const logsApp = path.join(packageRoot, 'test', 'fixtures', 'logs', 'app.py');

/**
 * svc deploy, app, deployment and logs, run in-process against a real
 * platform over real HTTP, with real containers behind the URLs they print.
 * The tests run in order: each starts from the state the previous one left.
 */
describe('CLI app commands against a real server', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let env: Record<string, string>;
  let urls: Record<string, string>;
  const reports: unknown[] = [];
  const run = (options: Parameters<typeof capture>[0] = {}) => capture({ env, ...options });

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  describe('svc deploy', () => {
    it('deploys the whole app: progress on stderr, --json prints exactly {app, workloads: [{name, kind, url}]}', async () => {
      const deployed = run();
      const result = await deploy(deployed.context, lifecycle('v1'), { json: true });
      const printed = JSON.parse(deployed.stdout());
      assert.deepEqual(printed, result);
      assert.deepEqual(Object.keys(printed), ['app', 'workloads']);
      assert.equal(printed.app, 'life');
      assert.deepEqual(
        printed.workloads.map((w: object) => Object.keys(w)),
        [
          ['name', 'kind', 'url'],
          ['name', 'kind', 'url'],
        ],
      );
      assert.deepEqual(
        printed.workloads.map((w: { name: string; kind: string }) => [w.name, w.kind]),
        [
          ['hello', 'endpoint'],
          ['other', 'endpoint'],
        ],
      );
      urls = Object.fromEntries(printed.workloads.map((w: { name: string; url: string | null }) => [w.name, w.url ?? '']));
      assert.equal(urls.hello, `${platform.url}/default/life/hello`);
      assert.deepEqual(await answer(urls.hello!), { status: 200, version: 1, code: undefined });
      assert.deepEqual(await answer(urls.other!), { status: 200, version: 1, code: undefined });

      const stderr = deployed.stderr();
      for (const step of [
        /reading .*v1\/app\.py/,
        /app life: 2 workloads/,
        /bundling /,
        /bundle [0-9a-f]{12}: \d+ files?, \d/,
        /uploading /,
        /uploaded/,
        /deploying life/,
        /deployed life in \d+\.\ds/,
      ]) {
        assert.match(stderr, step);
      }
    });

    it('--dry-run prints what the deploy would do and deploys nothing (local scheduler: no job plan)', async () => {
      const dry = run();
      const plan = await deploy(dry.context, lifecycle('v2'), { dryRun: true, prune: true, json: true });
      assert.deepEqual(JSON.parse(dry.stdout()), plan);
      assert.deepEqual(plan, {
        app: 'life',
        stage: 'deployed',
        scheduler: 'local',
        removed: ['other'],
        workloads: [{ name: 'hello', kind: 'endpoint', change: 'new_version', url: `${platform.url}/default/life/hello`, job: null }],
      });
      const described = (await call('GET', '/api/v1/apps/life', { token: env.SVC_TOKEN })).json;
      assert.deepEqual(
        described.deployments.map((d: { workload: string; version: number }) => [d.workload, d.version]),
        [
          ['hello', 1],
          ['other', 1],
        ],
        'nothing was deployed or pruned',
      );
      const table = run();
      await deploy(table.context, lifecycle('v2'), { dryRun: true, prune: true });
      assert.match(table.stdout(), /hello\s+new version\s+http:\/\/127\.0\.0\.1:\d+\/default\/life\/hello/);
      assert.match(table.stdout(), /other\s+would be deleted \(--prune\)/);
      assert.match(table.stderr(), /dry run: nothing was deployed/);
    });

    it('deploys one workload (<file>:<workload>): only it gets a new version; stdout is its name and URL; a known bundle is not uploaded again', async () => {
      const first = run();
      await deploy(first.context, `${lifecycle('v2')}:hello`);
      assert.equal(first.stdout(), `hello  ${urls.hello}\n`);
      assert.equal((await answer(urls.hello!)).version, 2);
      assert.equal((await answer(urls.other!)).version, 1);

      const again = run();
      await deploy(again.context, `${lifecycle('v2')}:hello`);
      assert.match(again.stderr(), /has this bundle already: nothing to upload/);
      assert.doesNotMatch(again.stderr(), /uploading/);
    });

    it('--prune removes the deployments the app no longer has', async () => {
      const pruned = run();
      const result = await deploy(pruned.context, lifecycle('v2'), { prune: true, json: true });
      assert.deepEqual(
        result.workloads.map((w) => w.name),
        ['hello'],
      );
      assert.equal((await answer(urls.other!, env.SVC_TOKEN)).status, 404);
    });

    it('refuses --prune with one workload, and a workload the app does not have, before anything is uploaded', async () => {
      const both = await rejectsWith(deploy(run().context, `${lifecycle('v2')}:hello`, { prune: true }));
      assert.equal(both.code, 'usage_invalid');
      const unknown = run();
      const missing = await rejectsWith(deploy(unknown.context, `${lifecycle('v2')}:nope`));
      assert.equal(missing.code, 'usage_invalid');
      assert.match(missing.message, /has no workload "nope"; it has hello/);
      assert.doesNotMatch(unknown.stderr(), /bundling/);
    });

    it('fails with the Python traceback when the app does not import', async () => {
      const error = await rejectsWith(deploy(run().context, lifecycle('broken')));
      assert.equal(error.code, 'manifest_failed');
      assert.match(error.message, /Traceback[\s\S]*RuntimeError: this version fails at import/);
    });

    it('prints a function without a URL (null in --json)', async () => {
      const text = run();
      await deploy(text.context, lifecycle('function'));
      assert.match(
        text.stdout(),
        /^hello +\(a function: no URL; call it with svc run .*:hello\)\nother +http:\/\/\S+\/default\/life\/other\n$/,
      );
      const json = run();
      const result = await deploy(json.context, lifecycle('v2'), { json: true, prune: true });
      assert.deepEqual(
        result.workloads.map((w) => [w.name, w.kind, w.url]),
        [['hello', 'endpoint', urls.hello]],
      );
    });
  });

  describe('svc app and svc deployment', () => {
    it('app list shows the app in a table, and as JSON', async () => {
      const table = run();
      await appList(table.context);
      const lines = table.stdout().trimEnd().split('\n');
      assert.match(lines[0]!, /^NAME +STATUS +DEPLOYMENTS +UPDATED$/);
      assert.match(lines[1]!, /^life +running +1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
      const json = run();
      await appList(json.context, { json: true });
      assert.deepEqual(
        JSON.parse(json.stdout()).apps.map((a: { name: string; paused: boolean }) => [a.name, a.paused]),
        [['life', false]],
      );
    });

    it('app pause takes the URLs down (503 app_paused) and prints the deployments; app resume brings them back', async () => {
      const paused = run();
      await appPause(paused.context, 'life');
      assert.match(paused.stderr(), /paused life: its URLs answer 503 app_paused/);
      assert.match(
        paused.stdout(),
        new RegExp(`^NAME +KIND +STATUS +VERSION +URL\\nlife/hello +endpoint +paused +v\\d+ +${urls.hello}\\n$`),
      );
      assert.deepEqual(await answer(urls.hello!), { status: 503, version: undefined, code: 'app_paused' });

      const resumed = run();
      await appResume(resumed.context, 'life', { json: true });
      const view = JSON.parse(resumed.stdout());
      assert.deepEqual([view.name, view.paused, view.deployments[0].status], ['life', false, 'running']);
      assert.equal((await answer(urls.hello!)).status, 200);
    });

    it('deployment list shows each deployment with its status and URL; --app filters', async () => {
      const table = run();
      await deploymentList(table.context, { app: 'life' });
      const lines = table.stdout().trimEnd().split('\n');
      assert.match(lines[0]!, /^NAME +KIND +STATUS +CONTAINERS +SCALE +URL$/);
      assert.match(lines[1]!, new RegExp(`^life/hello +endpoint +running +\\d+( \\+\\d+ starting)? +\\d+-\\d+ +${urls.hello}$`));
      const none = run();
      await deploymentList(none.context, { app: 'nothing-here', json: true });
      assert.deepEqual(JSON.parse(none.stdout()), { deployments: [] });
    });

    it('deployment stop takes one URL down (503 deployment_stopped), shown as stopped; delete (app:workload) removes it (404)', async () => {
      const stopped = run();
      await deploymentStop(stopped.context, 'life/hello');
      assert.match(stopped.stdout(), /life\/hello +endpoint +stopped/);
      assert.equal((await answer(urls.hello!)).code, 'deployment_stopped');
      const listed = run();
      await deploymentList(listed.context, { json: true });
      const hello = JSON.parse(listed.stdout()).deployments.find((d: { name: string }) => d.name === 'life/hello');
      assert.equal(hello.status, 'stopped');

      const deleted = run();
      await deploymentDelete(deleted.context, 'life:hello');
      assert.match(deleted.stderr(), /deleted life\/hello/);
      assert.equal((await answer(urls.hello!, env.SVC_TOKEN)).status, 404);

      const again = await rejectsWith(deploymentStop(run().context, 'life/hello'));
      assert.equal(again.code, 'not_found');
      assert.equal((await rejectsWith(deploymentStop(run().context, 'life'))).code, 'usage_invalid');
    });

    it('app delete refuses without --yes when not on a terminal, asks on one, and deletes once confirmed', async () => {
      await deploy(run().context, lifecycle('v1'));
      const script = await rejectsWith(appDelete(run().context, 'life'));
      assert.equal(script.code, 'confirmation_required');
      assert.match(script.hint ?? '', /--yes/);

      const declined = run({ interactive: true, answers: ['n'] });
      const no = await rejectsWith(appDelete(declined.context, 'life'));
      assert.equal(no.code, 'confirmation_required');
      assert.match(declined.stderr(), /Delete the app life and its 2 deployments\? .*\[y\/N\]/);
      assert.equal((await call('GET', '/api/v1/apps/life', { token: env.SVC_TOKEN })).status, 200, 'still there');

      const confirmed = run({ interactive: true, answers: ['yes'] });
      await appDelete(confirmed.context, 'life');
      assert.match(confirmed.stderr(), /deleted life/);
      assert.equal((await call('GET', '/api/v1/apps/life', { token: env.SVC_TOKEN })).status, 404);
      assert.equal((await rejectsWith(appDelete(run().context, 'life', { yes: true }))).code, 'not_found');
    });
  });

  describe('svc logs', () => {
    let sayUrl: string;

    before(async () => {
      const result = await deploy(run().context, logsApp);
      sayUrl = result.workloads[0]!.url!;
    });

    it('prints the kept lines of a deployment; --json one object per line with its workload; --since filters', async () => {
      const { said } = (await (await fetch(sayUrl)).json()) as { said: number };
      // The answer can come before svc has read the line from the container's stdout pipe.
      const saidLine = new RegExp(`^\\S+Z c-[0-9a-f]+ said ${said}$`, 'm');
      await until(`the line "said ${said}" is kept`, async () => {
        const text = run();
        await logs(text.context, 'logs:say');
        return saidLine.test(text.stdout());
      });

      const json = run();
      await logs(json.context, 'logs:say', { json: true });
      const lines = json
        .stdout()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      const line = lines.find((l) => l.text === `said ${said}`);
      assert.deepEqual(Object.keys(line).slice(0, 5), ['workload', 'time', 'container', 'stream', 'text']);
      assert.deepEqual([line.workload, line.stream], ['say', 'stdout']);

      const future = run();
      await logs(future.context, 'logs:say', { since: new Date(Date.now() + 3_600_000).toISOString() });
      assert.equal(future.stdout(), '');
      const recent = run();
      await logs(recent.context, 'logs:say', { since: '1h', json: true });
      assert.ok(recent.stdout().includes(`"said ${said}"`));
    });

    it('without a workload, merges every deployment by time, each line prefixed by its workload', async () => {
      await deploy(run().context, lifecycle('v1'));
      const text = run();
      await logs(text.context, 'life');
      const lines = text.stdout().trimEnd().split('\n');
      const workloads = lines.map((line) => /^\S+Z (\S+) c-[0-9a-f]+ /.exec(line)?.[1]);
      assert.deepEqual([...new Set(workloads)].sort(), ['hello', 'other'], text.stdout());
      const times = lines.map((line) => Date.parse(line.split(' ')[0]!));
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
      );
      await appDelete(run().context, 'life', { yes: true });
      assert.equal((await rejectsWith(logs(run().context, 'life'))).code, 'not_found');
    });

    it('--follow prints new lines as they come and ends cleanly on Ctrl-C', async () => {
      const followed = run();
      const done = logs(followed.context, 'logs:say', { follow: true });
      await followed.waitFor(/following logs\/say/);
      const { said } = (await (await fetch(sayUrl)).json()) as { said: number };
      await followed.waitFor(new RegExp(`said ${said}\\n`), 'stdout');
      followed.stop();
      await done;
      const count = followed
        .stdout()
        .split('\n')
        .filter((line) => line.endsWith(` said ${said}`)).length;
      assert.equal(count, 1, 'each line once, the kept ones not repeated by the stream');
    });

    it('--follow ends when the deployment is deleted', async () => {
      const followed = run();
      const done = logs(followed.context, 'logs', { follow: true, json: true });
      await followed.waitFor(/following logs\/say/);
      const { said } = (await (await fetch(sayUrl)).json()) as { said: number };
      await followed.waitFor(new RegExp(`"text":"said ${said}"`), 'stdout');
      await deploymentDelete(run().context, 'logs/say');
      await done;
      assert.match(followed.stderr(), /logs\/say: the deployment was deleted; stopped following/);
      for (const line of followed.stdout().trimEnd().split('\n')) assert.equal(JSON.parse(line).workload, 'say');
    });
  });
});

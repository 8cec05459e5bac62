import assert from 'node:assert/strict';
import { containerExec, containerList, containerLogs, containerStop } from '../../cli/commands/container.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture, rejectsWith } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { deployLifecycle } from './api-lifecycle-helpers.js';

interface Listed {
  id: string;
  deployment: string;
  state: string;
  cpuSeconds: number | null;
  memoryBytes: number | null;
  version: number;
}

/**
 * `svc container list | logs | exec | stop` on the embedded platform, with real containers: what each runs
 * and uses now (CPU seconds and memory from its cgroup, svc running as root here), one container's own log
 * lines, a command run inside one (owners only, recorded), and a stop after which the autoscaler starts
 * another for a deployment that keeps one.
 */
describe('svc container list, logs, exec and stop (embedded platform)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner = '';
  const env = () => ({ SVC_SERVER: platform.url, SVC_TOKEN: owner });
  const list = async (): Promise<Listed[]> => (await call('GET', '/api/v1/containers?app=life', { token: owner })).json.containers;

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    await deployLifecycle(platform.url, owner);
    // One container kept whatever the load: a stopped one is replaced.
    assert.equal((await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { min: 1 } })).status, 200);
  });
  after(() => platform?.close());

  it('lists each running container with its deployment, version, state and what it uses now', async () => {
    const containers = await list();
    const hello = containers.find((c) => c.deployment === 'life/hello');
    assert.ok(hello, JSON.stringify(containers));
    assert.deepEqual([hello.state, hello.version], ['healthy', 1]);
    if (platform.driver.resourceLimits?.enforced) {
      assert.ok(typeof hello.cpuSeconds === 'number' && hello.cpuSeconds > 0, `cpu seconds from the cgroup: ${hello.cpuSeconds}`);
      assert.ok(typeof hello.memoryBytes === 'number' && hello.memoryBytes > 1024 * 1024, `memory from the cgroup: ${hello.memoryBytes}`);
    }
    const shown = capture({ env: env() });
    await containerList(shown.context, 'life');
    assert.match(
      shown.stdout(),
      new RegExp(`^ID +DEPLOYMENT +VERSION +STATE +AGE +IN FLIGHT +CPU +MEMORY\\n(.*\\n)*${hello.id} +life/hello +v1 +healthy `, 'm'),
    );
  });

  it("prints one container's own log lines", async () => {
    const [hello] = (await list()).filter((c) => c.deployment === 'life/hello');
    const printed = capture({ env: env() });
    await containerLogs(printed.context, hello!.id);
    assert.match(printed.stdout(), /system: starting container/);
    const lines = (await call('GET', `/api/v1/containers/${hello!.id}/logs`, { token: owner })).json.lines as { container: string }[];
    assert.ok(lines.length > 0 && lines.every((line) => line.container === hello!.id), 'only its own lines');
  });

  it('runs ps in a running container, in its cgroup, with its environment; records who did it; owners only', async () => {
    const [hello] = (await list()).filter((c) => c.deployment === 'life/hello');
    const ran = capture({ env: env() });
    const code = await containerExec(ran.context, hello!.id, [
      'sh',
      '-c',
      'ps -o args= -p 1 >/dev/null; ps aux | grep -c svc.runtime; echo "$SVC_APP/$SVC_WORKLOAD"; cat /proc/self/cgroup',
    ]);
    assert.equal(code, 0, ran.stderr());
    const [count, identity, ...cgroup] = ran.stdout().trim().split('\n');
    assert.ok(Number(count) >= 1, `ps sees the container's processes: ${count}`);
    assert.equal(identity, 'life/hello', "the container's own variables");
    if (platform.driver.resourceLimits?.enforced) assert.match(cgroup.join('\n'), new RegExp(hello!.id), "in the container's cgroup");
    const failing = await call('POST', `/api/v1/containers/${hello!.id}/exec`, {
      token: owner,
      json: { command: ['sh', '-c', 'echo oops >&2; exit 3'] },
    });
    assert.deepEqual([failing.json.exitCode, failing.json.stderr], [3, 'oops\n']);
    const slow = await call('POST', `/api/v1/containers/${hello!.id}/exec`, {
      token: owner,
      json: { command: ['sleep', '5'], timeoutSeconds: 1 },
    });
    assert.equal(slow.json.timedOut, true);
    const lines = (await call('GET', `/api/v1/containers/${hello!.id}/logs`, { token: owner })).json.lines as { text: string }[];
    assert.ok(
      lines.some((line) => line.text.startsWith('exec by ') && line.text.includes('["sh","-c"')),
      `recorded in its log: ${JSON.stringify(lines.filter((l) => l.text.startsWith('exec')))}`,
    );
    const member = (await tokenFor(platform, 'default')).secret;
    const refused = await call('POST', `/api/v1/containers/${hello!.id}/exec`, { token: member, json: { command: ['ps'] } });
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.json.error.message, /for owners of the workspace/);
    assert.equal((await rejectsWith(containerExec(capture({ env: env() }).context, hello!.id, []))).code, 'usage_invalid');
  });

  it('stops one; the autoscaler starts another for the deployment that keeps one', async () => {
    const [before] = (await list()).filter((c) => c.deployment === 'life/hello');
    const stopped = capture({ env: env() });
    await containerStop(stopped.context, before!.id);
    assert.match(stopped.stderr(), new RegExp(`stopped ${before!.id} of life/hello`));
    await until(
      'another container is healthy',
      async () => (await list()).some((c) => c.deployment === 'life/hello' && c.id !== before!.id && c.state === 'healthy'),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
  });

  it("answers another workspace's container id as an unknown one", async () => {
    const [hello] = (await list()).filter((c) => c.deployment === 'life/hello');
    assert.equal((await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'acme' } })).status, 201);
    const other = (await call('POST', '/api/v1/workspaces/acme/token', { token: owner, json: {} })).json.secret as string;
    assert.deepEqual((await call('GET', '/api/v1/containers', { token: other })).json.containers, []);
    for (const [method, at] of [
      ['GET', `/api/v1/containers/${hello!.id}/logs`],
      ['POST', `/api/v1/containers/${hello!.id}/stop`],
    ] as const) {
      assert.equal((await call(method, at, { token: other })).status, 404, `${method} ${at}`);
    }
    assert.equal((await call('GET', '/api/v1/containers/c-nothing/logs', { token: owner })).status, 404);
    assert.equal((await call('GET', '/api/v1/containers/bad%20id/logs', { token: owner })).status, 400);
  });
});

import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import { shell } from '../../cli/commands/shell.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture, rejectsWith } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { testTerminal } from '../helpers/test-terminal.js';
import { until } from '../helpers/until.js';
import { deployLifecycle } from './api-lifecycle-helpers.js';

/**
 * `svc shell` on the embedded platform, with real containers and a real pseudo-terminal in them: a new
 * container of a workload (its image, environment and secrets) from a file, a running container with
 * --container, the size of the terminal followed, the exit code given back, owners only, recorded.
 */
describe('svc shell (embedded platform)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner = '';
  const env = () => ({ SVC_SERVER: platform.url, SVC_TOKEN: owner });
  const helloContainer = async (): Promise<string> =>
    (await call('GET', '/api/v1/containers?app=life', { token: owner })).json.containers.find(
      (c: { deployment: string }) => c.deployment === 'life/hello',
    ).id;

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    await deployLifecycle(platform.url, owner);
    assert.equal((await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { min: 1 } })).status, 200);
    await until('hello runs', async () => (await call('GET', '/api/v1/containers?app=life', { token: owner })).json.containers.length > 0, {
      timeoutMs: 30_000,
    });
    const secret = await call('POST', '/api/v1/secrets', {
      token: owner,
      json: { name: 'db', values: { DATABASE_URL: 'postgres://shell' } },
    });
    assert.equal(secret.status, 201, secret.text);
  });
  after(() => platform?.close());

  it('opens a shell on a real terminal in a new container of a workload, with its secrets, and follows the window size', async () => {
    process.env.VAULT_INLINE = 'inline-value';
    const term = testTerminal(33, 101);
    const started = capture({ env: env(), cwd: packageRoot });
    try {
      const ended = shell(started.context, `${path.join('test', 'fixtures', 'secrets', 'app.py')}::env`, [], {}, term.terminal);
      term.type('tty; stty size; echo "db=$DATABASE_URL inline=$INLINE_TOKEN"; pwd; python -c "import svc; print(6 * 7, \'py\')"\n');
      await until('the first answers', async () => /42 py/.test(term.screen()), { timeoutMs: 60_000, intervalMs: 50 });
      term.resize({ rows: 50, cols: 140 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      term.type('stty size; exit 7\n');
      assert.equal(await ended, 7, 'svc exits as the shell did');
      const screen = term.screen();
      assert.match(screen, /\/dev\/pts\/\d+/, 'a real terminal');
      assert.match(screen, /[\r\n]33 101\r\n/, 'the size it was opened with');
      assert.match(screen, /[\r\n]50 140\r\n/, 'the size after the window changed');
      assert.match(screen, /db=postgres:\/\/shell inline=inline-value\r\n\/\S+\r\n/, "its secrets, in its code's folder");
      assert.match(started.stderr(), /starting a container of vault\/env for the shell \(run-[0-9a-f]{16}\)/);
    } finally {
      delete process.env.VAULT_INLINE;
    }
    assert.deepEqual((await call('GET', '/api/v1/runs', { token: owner })).json.runs, [], 'the container of the shell ended with it');
  });

  it('runs a command on a terminal in a running container with --container, recorded in its log', async () => {
    const id = await helloContainer();
    const term = testTerminal(24, 80);
    const code = await shell(
      capture({ env: env() }).context,
      undefined,
      ['sh', '-c', 'echo "app=$SVC_APP"; test -t 0 && echo tty; exit 3'],
      { container: id },
      term.terminal,
    );
    assert.equal(code, 3);
    assert.match(term.screen(), /app=life\r\ntty\r\n/);
    const lines = (await call('GET', `/api/v1/containers/${id}/logs`, { token: owner })).json.lines as { text: string }[];
    assert.ok(
      lines.some((line) => /^terminal by .*: \["sh","-c",/.test(line.text)),
      'who opened it, and what',
    );
  });

  it('closes a terminal whose client breaks the WebSocket protocol, and goes on serving', async () => {
    const id = await helloContainer();
    const socket = new WebSocket(`${platform.url.replace(/^http/, 'ws')}/api/v1/containers/${id}/terminal?command=sh`, {
      headers: { Authorization: `Bearer ${owner}` },
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.on('error', () => {}); // the client side of the break: not what is tested
    // A text frame the client did not mask (RFC 6455 §5.1): svc must end this session, not itself.
    (socket as unknown as { _socket: Socket })._socket.write(Buffer.from([0x81, 0x01, 0x61]));
    assert.equal(await closed, 1002, 'closed as a protocol error');
    assert.equal((await call('GET', '/api/v1/whoami', { token: owner })).status, 200, 'the server is up');
  });

  it('refuses members, other workspaces, bad sizes and a missing target, opening nothing', async () => {
    const id = await helloContainer();
    const term = testTerminal(24, 80);
    const member = (await tokenFor(platform, 'default')).secret;
    const asMember = await rejectsWith(
      shell(capture({ env: { ...env(), SVC_TOKEN: member } }).context, undefined, [], { container: id }, term.terminal),
    );
    assert.equal(asMember.code, 'forbidden');
    assert.match(asMember.message, /for owners of the workspace/);
    assert.equal((await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'acme' } })).status, 201);
    const other = (await call('POST', '/api/v1/workspaces/acme/token', { token: owner, json: {} })).json.secret as string;
    const elsewhere = await rejectsWith(
      shell(capture({ env: { ...env(), SVC_TOKEN: other } }).context, undefined, [], { container: id }, term.terminal),
    );
    assert.equal(elsewhere.code, 'not_found', "another workspace's container is an unknown one");
    // The server refuses a terminal past 1000 rows; the CLI fits a larger window into it instead.
    const refusedStatus = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${platform.url.replace(/^http/, 'ws')}/api/v1/containers/${id}/terminal?rows=5000&cols=80`, {
        headers: { Authorization: `Bearer ${owner}` },
      });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('open', () => reject(new Error('a terminal of 5000 rows was opened')));
      socket.once('error', () => {});
    });
    assert.equal(refusedStatus, 400);
    const huge = testTerminal(5000, 80);
    assert.equal(await shell(capture({ env: env() }).context, undefined, ['sh', '-c', 'stty size'], { container: id }, huge.terminal), 0);
    assert.match(huge.screen(), /^1000 80\r?$/m);
    // An empty word is a word, as exec takes it: sh -c '' runs nothing and ends with 0.
    assert.equal(
      await shell(capture({ env: env() }).context, undefined, ['sh', '-c', ''], { container: id }, testTerminal(24, 80).terminal),
      0,
    );
    assert.equal((await rejectsWith(shell(capture({ env: env() }).context, undefined, [], {}, term.terminal))).code, 'usage_invalid');
    const notWorkload = await rejectsWith(
      shell(capture({ env: env(), cwd: packageRoot }).context, 'test/fixtures/secrets/app.py::nope', [], {}, term.terminal),
    );
    assert.match(notWorkload.message, /has no workload nope/);
    assert.equal(term.screen(), '');
  });
});

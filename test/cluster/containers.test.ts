/**
 * Looking inside containers on real Nomad (opt-in: `npm run test:cluster`): `svc container exec` and
 * `svc shell --container` through Nomad's allocation exec WebSocket, in the task's environment and code
 * folder, with the exit code and a real terminal's size, on Nomad's `exec` driver (in the task's chroot and
 * namespaces: `ps` sees the task's own processes) and on `raw_exec` (beside the task).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { shell } from '../../cli/commands/shell.js';
import { packageRoot } from '../../core/model/paths.js';
import { capture } from '../cli/fixture.js';
import { until } from '../helpers/until.js';
import { testTerminal } from '../helpers/test-terminal.js';
import { useCluster } from './suite.js';
import { SvcServer, svcCli } from './svc-process.js';

describe('svc on real Nomad and Consul: container exec and shell', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  for (const driver of ['exec', 'raw_exec'])
    describe(`on ${driver}`, () => {
      let server: SvcServer;
      let hello = '';

      before(async () => {
        server = await SvcServer.serving((await cluster()).svcEnv({ SVC_NOMAD_DRIVER: driver }));
        const deployed = await svcCli(server, ['deploy', path.join(packageRoot, 'test', 'fixtures', 'lifecycle', 'v1', 'app.py')]);
        assert.equal(deployed.code, 0, deployed.stderr);
        await until(
          'a container of life/hello is listed',
          async () => {
            const listed = await svcCli(server, ['container', 'list', 'life', '--json']);
            const found = (JSON.parse(listed.stdout).containers as { id: string; deployment: string; state: string }[]).find(
              (c) => c.deployment === 'life/hello' && c.state === 'healthy',
            );
            hello = found?.id ?? '';
            return hello !== '';
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
      });
      after(async () => {
        await server?.stop();
      });

      it('runs a command in an allocation with svc container exec: its output, environment, code folder and exit code', async () => {
        const ran = await svcCli(server, ['container', 'exec', hello, '--', 'sh', '-c', 'echo "app=$SVC_APP"; ls; echo oops >&2; exit 3']);
        assert.equal(ran.code, 3, `${ran.stdout}\n${ran.stderr}\n${server.output.slice(-2000)}`);
        assert.match(ran.stdout, /app=life\napp\.py\n/, "the task's environment, in its code's folder");
        assert.match(ran.stderr, /oops/);
      });

      it('opens a terminal in an allocation with svc shell --container, of the size asked', async () => {
        const term = testTerminal(31, 97);
        const ended = shell(
          capture({ env: { SVC_SERVER: server.url, SVC_TOKEN: server.ownerToken } }).context,
          undefined,
          ['sh', '-c', 'test -t 0 && echo on-a-tty; stty size; echo "term=$TERM"; read answer; echo "got $answer"; exit 4'],
          { container: hello },
          term.terminal,
        );
        // Typed once the shell waits for it: keys typed earlier echo between the lines it prints.
        await until('the shell asks', async () => term.screen().includes('term='), { timeoutMs: 30_000, intervalMs: 50 });
        term.type('forty-two\r');
        assert.equal(await ended, 4, term.screen());
        assert.match(term.screen(), /on-a-tty\r\n31 97\r\nterm=xterm-256color\r\n/, `the client's TERM: ${JSON.stringify(term.screen())}`);
        assert.match(term.screen(), /got forty-two/);
      });

      it('opens a terminal in a new allocation of a workload with svc shell <file>::<workload>', async () => {
        const term = testTerminal(24, 80);
        const ended = shell(
          capture({ env: { SVC_SERVER: server.url, SVC_TOKEN: server.ownerToken } }).context,
          `${path.join(packageRoot, 'test', 'fixtures', 'lifecycle', 'v1', 'app.py')}::other`,
          ['sh', '-c', 'test -t 0 && echo "on-a-tty in $SVC_WORKLOAD"; ls; exit 5'],
          {},
          term.terminal,
        );
        assert.equal(await ended, 5, term.screen());
        assert.match(term.screen(), /on-a-tty in other\r\napp\.py/, "a terminal in the workload's environment and code folder");
      });

      it('runs ps in a running allocation', async () => {
        const ran = await svcCli(server, ['container', 'exec', hello, '--', 'ps', '-e', '-o', 'pid,args']);
        assert.equal(ran.code, 0, ran.stderr);
        assert.match(ran.stdout, /svc\.runtime .*--workload hello/, "the task's runtime among the processes");
        if (driver === 'exec') assert.ok(ran.stdout.trim().split('\n').length < 10, `only the task's own processes:\n${ran.stdout}`);
      });
    });
});

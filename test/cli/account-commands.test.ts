import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import login from '../../cli/commands/login.js';
import logout from '../../cli/commands/logout.js';
import { tokenCreate, tokenList, tokenRevoke } from '../../cli/commands/token.js';
import whoami from '../../cli/commands/whoami.js';
import { credentialsPath, writeCredentials } from '../../cli/credentials.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { capture, rejectsWith } from './fixture.js';

/**
 * The commands about who you are and your tokens, run in-process against a
 * real platform over real HTTP: svc login (RFC 8628 device flow, approved or
 * denied through the API as a person would in the dashboard), logout, whoami,
 * token create/list/revoke.
 */
describe('CLI account commands against a real server', function () {
  this.timeout(60_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let asOwner: Record<string, string>;
  const reports: unknown[] = [];

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    asOwner = { SVC_SERVER: platform.url, SVC_TOKEN: owner };
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  /** Approves (or denies) the code the command printed, through the API, as the owner. */
  async function decide(run: ReturnType<typeof capture>, decision: 'approve' | 'deny'): Promise<string> {
    const [, userCode] = await run.waitFor(/code: ([A-Z]{4}-[A-Z]{4})/);
    const answer = await call('POST', `/api/v1/device/${decision}`, { token: owner, json: { user_code: userCode } });
    assert.equal(answer.status, 200, answer.text);
    return userCode!;
  }

  describe('svc login', () => {
    it('prints the link and the code, gets the token once approved, and saves server, token and workspace (0600)', async () => {
      let approved: Promise<string> | undefined;
      const sleeps: number[] = [];
      const run = capture({
        interactive: true,
        // The first wait lasts until the approval went through: no timing in the test.
        sleep: async (ms) => {
          sleeps.push(ms);
          await approved;
        },
      });
      const done = login(run.context, { server: `${platform.url}/` });
      approved = decide(run, 'approve');
      assert.equal(await done, 0);
      const userCode = await approved;

      assert.ok(run.stderr().includes(`${platform.url}/device?user_code=${userCode}`), run.stderr());
      assert.match(run.stderr(), new RegExp(`code: ${userCode}`));
      assert.deepEqual(run.opened, [`${platform.url}/device?user_code=${userCode}`], 'a terminal gets the link opened');
      assert.deepEqual(sleeps, [5000], "waits the server's interval before polling");
      assert.match(run.stdout(), /^Signed in to http:\/\/127\.0\.0\.1:\d+ as acc_\w+ \(owner\) in workspace default\.\n$/);
      assert.ok(!run.stdout().includes(userCode), 'the code is not a result: stderr');

      const file = credentialsPath(run.context.env);
      const saved = JSON.parse(readFileSync(file, 'utf8'));
      assert.deepEqual(
        { version: saved.version, server: saved.server, workspace: saved.workspace },
        { version: 1, server: platform.url, workspace: 'default' },
      );
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const who = await call('GET', '/api/v1/whoami', { token: saved.token });
      assert.equal(who.status, 200);
      assert.equal(who.json.workspace, 'default');

      // The saved sign-in is what the next commands use, without any SVC_* variable but the config dir.
      const next = capture({ env: { SVC_CONFIG_DIR: run.context.env.SVC_CONFIG_DIR } });
      await whoami(next.context, { json: true });
      const shown = JSON.parse(next.stdout());
      assert.deepEqual(
        { server: shown.server, workspace: shown.workspace, tokenId: shown.tokenId, token: shown.sources.token },
        { server: platform.url, workspace: 'default', tokenId: who.json.tokenId, token: file },
      );
    });

    it('grows the interval by 5 s on slow_down, as RFC 8628 says', async () => {
      const sleeps: number[] = [];
      let approval: Promise<string> | undefined;
      const run = capture({
        // No real waiting: the second poll comes too soon, and the server answers slow_down.
        sleep: async (ms) => {
          sleeps.push(ms);
          if (sleeps.length === 3) await (approval = decide(run, 'approve'));
        },
      });
      assert.equal(await login(run.context, { server: platform.url, browser: false }), 0);
      assert.ok(approval);
      assert.deepEqual(sleeps, [5000, 5000, 10_000]);
      assert.deepEqual(run.opened, [], 'never opens a browser without a terminal');
    });

    it('stops with login_denied when the request is denied, and saves nothing', async () => {
      let denied: Promise<string> | undefined;
      const run = capture({ sleep: async () => void (await denied) });
      const done = login(run.context, { server: platform.url });
      denied = decide(run, 'deny');
      const error = await rejectsWith(done);
      assert.equal(error.code, 'login_denied');
      assert.match(error.message, /denied/);
      assert.match(error.hint ?? '', /svc login/);
      assert.equal(existsSync(credentialsPath(run.context.env)), false);
    });

    it('does not open a browser with --no-browser, even on a terminal, and ends on Ctrl-C with 130', async () => {
      const run = capture({ interactive: true });
      const done = login(run.context, { server: platform.url, browser: false });
      await run.waitFor(/code: [A-Z]{4}-[A-Z]{4}/);
      await run.waitFor(/waiting for approval/);
      run.stop();
      assert.equal(await done, 130);
      assert.deepEqual(run.opened, []);
      assert.match(run.stderr(), /stopped: not signed in, nothing was saved/);
      assert.equal(existsSync(credentialsPath(run.context.env)), false);
    });

    it('says which server it could not reach', async () => {
      const port = await closedPort();
      const error = await rejectsWith(login(capture().context, { server: `http://127.0.0.1:${port}` }));
      assert.equal(error.code, 'server_unreachable');
      assert.match(
        error.message,
        new RegExp(`cannot reach the svc server at http://127\\.0\\.0\\.1:${port} \\(from --server\\): connection refused`),
      );
      assert.match(error.hint ?? '', /svc server/);
    });
  });

  describe('svc logout', () => {
    it('revokes the saved token on the server, deletes the file, and says both', async () => {
      const { secret } = (await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'to log out' } })).json;
      const run = capture();
      await writeCredentials({ server: platform.url, token: secret, workspace: 'default' }, run.context.env);
      await logout(run.context);
      assert.equal((await call('GET', '/api/v1/whoami', { token: secret })).status, 401, 'the token is revoked');
      assert.equal(existsSync(credentialsPath(run.context.env)), false);
      assert.match(run.stderr(), /revoked the token tok_[0-9a-f]{12} on http:/);
      assert.match(run.stderr(), /deleted .*credentials\.json/);
      assert.equal(run.stdout(), `Signed out of ${platform.url}.\n`);
    });

    it('still deletes the file when the server no longer takes the token', async () => {
      const run = capture();
      await writeCredentials(
        { server: platform.url, token: 'svc_0000000000000000000000000000000000000000', workspace: 'default' },
        run.context.env,
      );
      await logout(run.context);
      assert.equal(existsSync(credentialsPath(run.context.env)), false);
      assert.match(run.stderr(), /no longer accepts the token/);
    });

    it('says there is nothing to do when not signed in', async () => {
      const run = capture();
      await logout(run.context);
      assert.equal(run.stdout(), 'Not signed in; nothing to do.\n');
    });
  });

  describe('svc whoami', () => {
    it('uses the owner token of a server on this machine when nothing else is set', async () => {
      const run = capture({ env: { SVC_DATA_DIR: platform.config.dataDir, SVC_PORT: String(new URL(platform.url).port) } });
      await whoami(run.context);
      assert.match(run.stdout(), new RegExp(`server: +${platform.url.replace(/\./g, '\\.')} +\\(a server on this machine\\)`));
      assert.match(run.stdout(), /workspace: +default/);
      assert.ok(run.stdout().includes(path.join(platform.config.dataDir, 'owner-token')), run.stdout());
    });

    it('stops with not_signed_in when no token is found', async () => {
      const error = await rejectsWith(whoami(capture({ env: { SVC_SERVER: platform.url } }).context));
      assert.equal(error.code, 'not_signed_in');
    });
  });

  describe('svc token', () => {
    it('create prints the secret alone on stdout, the rest on stderr; list shows it; revoke ends it', async () => {
      const created = capture({ env: asOwner });
      await tokenCreate(created.context, { name: 'ci', 'expires-in': '30d' });
      const secret = created.stdout().trim();
      assert.match(created.stdout(), /^svc_[0-9A-Za-z]{40}\n$/);
      const id = /created the token (tok_[0-9a-f]{12}) "ci" in workspace default, expiring (\S+)/.exec(created.stderr());
      assert.ok(id, created.stderr());
      assert.ok(Math.abs(Date.parse(id[2]!) - (Date.now() + 30 * 86_400_000)) < 3_600_000, 'expires in about 30 days');
      assert.match(created.stderr(), /shown this once/);
      assert.equal((await call('GET', '/api/v1/whoami', { token: secret })).json.tokenId, id[1]);

      const listed = capture({ env: asOwner });
      await tokenList(listed.context);
      const lines = listed.stdout().trimEnd().split('\n');
      assert.match(lines[0]!, /^ID +NAME +CREATED +LAST USED +EXPIRES$/);
      assert.ok(
        lines.some((line) => line.startsWith(`${id[1]}  ci`)),
        listed.stdout(),
      );
      const json = capture({ env: asOwner });
      await tokenList(json.context, { json: true });
      const tokens = JSON.parse(json.stdout()).tokens as { id: string; name: string; lastUsedAt: string | null }[];
      assert.equal(tokens.find((t) => t.id === id[1])?.name, 'ci');
      assert.ok(Date.now() - Date.parse(tokens.find((t) => t.id === id[1])!.lastUsedAt!) < 60_000, 'last used by the whoami above');
      assert.ok(!json.stdout().includes(secret), 'never a secret in a list');

      const revoked = capture({ env: asOwner });
      await tokenRevoke(revoked.context, id[1]!);
      assert.match(revoked.stderr(), new RegExp(`revoked ${id[1]}`));
      assert.equal((await call('GET', '/api/v1/whoami', { token: secret })).status, 401);

      // The revoked token, used from SVC_TOKEN: the server's 401, with where the token came from.
      const refused = await rejectsWith(whoami(capture({ env: { SVC_SERVER: platform.url, SVC_TOKEN: secret } }).context));
      assert.equal(refused.code, 'unauthorized');
      assert.match(refused.hint ?? '', /The token from SVC_TOKEN was refused/);
    });

    it('create --expires-at passes the time; --json prints the token with its secret', async () => {
      const run = capture({ env: asOwner });
      const at = new Date(Date.now() + 86_400_000).toISOString();
      await tokenCreate(run.context, { name: 'laptop', 'expires-at': at, json: true });
      const token = JSON.parse(run.stdout());
      assert.deepEqual([token.name, token.expiresAt], ['laptop', at]);
      assert.match(token.secret, /^svc_/);
    });

    it("refuses --expires-in with --expires-at, a bad duration, and passes the server's own refusals on", async () => {
      const both = await rejectsWith(
        tokenCreate(capture({ env: asOwner }).context, { 'expires-in': '1d', 'expires-at': '2030-01-01T00:00:00Z' }),
      );
      assert.equal(both.code, 'usage_invalid');
      const bad = await rejectsWith(tokenCreate(capture({ env: asOwner }).context, { 'expires-in': '30 days' }));
      assert.equal(bad.code, 'usage_invalid');
      const tooFar = await rejectsWith(tokenCreate(capture({ env: asOwner }).context, { 'expires-in': '400d' }));
      assert.equal(tooFar.code, 'bad_request', 'the server refuses more than a year, with its message');
      assert.match(tooFar.message, /year/);
      const unknown = await rejectsWith(tokenRevoke(capture({ env: asOwner }).context, 'tok_000000000000'));
      assert.equal(unknown.code, 'not_found');
    });
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

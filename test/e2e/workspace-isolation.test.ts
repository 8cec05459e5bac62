import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { checkAnswer } from '../core/http/api/answer-check.js';
import { apiClient, parseJson, requestParts, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder, callRun, pickledCall, runFixture, unpickled } from './run-helpers.js';

/** One answer, read whole, except an event stream: its status and type are the answer (reading on would wait forever). */
interface Probe {
  readonly status: number;
  readonly type: string;
  readonly text: string;
  readonly json: any;
}

interface Ask {
  readonly token?: string;
  /** The secret of a dashboard session, sent as the cookie `svc_session`. */
  readonly session?: string;
  readonly json?: unknown;
  readonly form?: Record<string, string>;
  readonly body?: Buffer;
  readonly headers?: Record<string, string>;
}

const SSE = { Accept: 'text/event-stream' };
/** Every request of these tests gives up after this long: a bound on a hang. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Names and ids nothing has: the control of every refusal (B's answer about A's object must be the answer about one of these). */
const NONE = {
  app: 'nope',
  token: 'tok_000000000000',
  sha256: 'f'.repeat(64),
  run: 'run-0123456789abcdef',
  member: 'acc_00000000000000ff',
  workspace: 'nope',
};

/**
 * Isolation between workspaces, over real HTTP with real containers: the
 * workspace `default` (A, the owner's) holds an app with a protected and a
 * public endpoint, its preview, a token, uploaded bundles, a remote run and
 * an invited member; the workspace `acme` (B) is reached with a token of the
 * same owner account in B, a token of a person invited into B only, and
 * dashboard sessions of both in B. Whatever B names of A's (by path, by id,
 * by host name), the answer is the one for an object that does not exist —
 * 404 `not_found`, word for word once the names are swapped — and A is
 * unchanged afterwards.
 */
describe('workspace isolation: another workspace gets 404 for every object of default', function () {
  this.timeout(300_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  const reports: unknown[] = [];
  let echo: LoadedManifest;
  let runsApp: LoadedManifest;

  /** Workspace A (`default`): what it holds. */
  const a = {
    echoSha: '',
    runsSha: '',
    token: { id: '', secret: '' },
    member: { id: '', name: 'Ada Default' },
    run: '',
    /** Path and host URLs of the deployed app's and the preview's endpoints. */
    urls: { private: { path: '', host: '' }, public: { path: '', host: '' }, previewPrivate: { path: '', host: '' } },
    /** The owner's dashboard session in A: the control that A's pages exist at these paths. */
    session: { secret: '', csrf: '' },
  };
  /** Workspace B (`acme`): the credentials that try A's objects. */
  const b = {
    ownerToken: '',
    memberToken: '',
    member: { id: '', name: 'Bea Acme' },
    memberSession: { secret: '', csrf: '' },
    ownerSession: { secret: '', csrf: '' },
  };
  const bTokens = () => [
    { who: "the owner account's token in acme", token: b.ownerToken },
    { who: 'the token of a member of acme only', token: b.memberToken },
  ];
  const bSessions = () => [
    { who: "acme's member's dashboard session", ...b.memberSession, owner: false },
    { who: "the owner account's dashboard session in acme", ...b.ownerSession, owner: true },
  ];

  async function ask(method: string, urlPath: string, options: Ask = {}): Promise<Probe> {
    const { headers, body } = requestParts(options);
    if (options.session !== undefined) headers.Cookie = `svc_session=${options.session}`;
    // A form is what a browser posts: from the dashboard's own origin.
    if (options.form !== undefined) headers.Origin ??= platform.url;
    const response = await fetch(`${platform.url}${urlPath}`, {
      method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream')) {
      await response.body?.cancel();
      return { status: response.status, type, text: '(an event stream)', json: undefined };
    }
    const text = await response.text();
    checkAnswer(method, urlPath, response.status, type, text);
    return { status: response.status, type, text, json: parseJson(text) };
  }

  /** A GET of a host-based URL: to this machine's gateway, with the URL's host name in the Host header. */
  function askHost(url: string, token?: string): Promise<Probe> {
    const parsed = new URL(url);
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port: parsed.port,
          path: `${parsed.pathname}${parsed.search}`,
          method: 'GET',
          timeout: REQUEST_TIMEOUT_MS,
          headers: { Host: parsed.host, ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'] ?? '', text, json });
          });
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer from ${url} in ${REQUEST_TIMEOUT_MS} ms`)));
      request.on('error', reject);
      request.end();
    });
  }

  /** What varies between two renderings of the same page: the one-time form ids. */
  const normalize = (text: string) => text.replace(/name="_once" value="[0-9a-f]+"/g, 'name="_once" value="…"');

  /**
   * B's answer about A's object (`got`) must be B's answer about an object
   * that does not exist (`missing`): the same status (404 unless told), the
   * same error code, and the same body once A's names are swapped for the
   * missing ones'. Anything else tells B that A's object exists.
   */
  function sameAsMissing(
    what: string,
    got: Probe,
    missing: Probe,
    swaps: readonly (readonly [string, string])[],
    expected: { status: number; code: string } = { status: 404, code: 'not_found' },
  ): void {
    assert.equal(
      missing.status,
      expected.status,
      `${what}: the control (nothing of that name) answers ${missing.status}: ${missing.text.slice(0, 400)}`,
    );
    assert.equal(got.status, expected.status, `${what}: answered ${got.status}, not ${expected.status}: ${got.text.slice(0, 400)}`);
    if (got.type.startsWith('application/json') && got.text !== '')
      assert.equal(got.json?.error?.code, expected.code, `${what}: ${got.text}`);
    // Both names become one placeholder in both answers, so that a word they share by chance (`default`) stays equal.
    const neutral = (text: string) =>
      swaps.reduce((t, [real, fake], i) => t.replaceAll(real, `<name ${i}>`).replaceAll(fake, `<name ${i}>`), normalize(text));
    assert.equal(neutral(got.text), neutral(missing.text), `${what}: the answer tells A's object from one that does not exist`);
  }

  /** None of A's identifiers appears in `text` (an answer B got without naming them). */
  function showsNothingOfA(what: string, text: string): void {
    const secrets = {
      "A's token id": a.token.id,
      "A's run id": a.run,
      "A's member id": a.member.id,
      "A's member's name": a.member.name,
      "A's echo bundle": a.echoSha,
      "A's runs bundle": a.runsSha,
      "A's app URLs": '/default/echo',
    };
    for (const [name, value] of Object.entries(secrets))
      assert.ok(!text.includes(value), `${what} shows ${name} (${value}): ${text.slice(0, 600)}`);
  }

  /** A as the setup left it: its app running (not paused, every workload running at version 1), its preview, run, token and member all there. */
  async function assertAUntouched(): Promise<void> {
    const app = await call('GET', '/api/v1/apps/echo', { token: owner });
    assert.equal(app.status, 200, app.text);
    assert.equal(app.json.paused, false);
    for (const d of app.json.deployments as { name: string; status: string; version: number }[]) {
      assert.deepEqual({ name: d.name, status: d.status, version: d.version }, { name: d.name, status: 'running', version: 1 });
    }
    assert.equal(app.json.deployments.length, 4);
    assert.equal((await call('GET', '/api/v1/apps/echo/preview', { token: owner })).status, 200, "A's preview is still there");
    assert.equal((await call('GET', `/api/v1/runs/${a.run}`, { token: owner })).status, 200, "A's run is still there");
    const tokens = (await call('GET', '/api/v1/tokens', { token: owner })).json.tokens as { id: string }[];
    assert.ok(
      tokens.some((t) => t.id === a.token.id),
      "A's token is still listed",
    );
    const members = (await call('GET', '/api/v1/members', { token: owner })).json.members as { id: string }[];
    assert.ok(
      members.some((m) => m.id === a.member.id),
      "A's member is still a member",
    );
    assert.equal(
      (await ask('GET', new URL(a.urls.private.path).pathname, { token: a.token.secret })).status,
      200,
      "A's token still reaches A's protected endpoint",
    );
    assert.equal(
      (await askHost(a.urls.private.host, a.token.secret)).status,
      200,
      "A's token still reaches A's protected endpoint by host name",
    );
    assert.equal((await askHost(a.urls.previewPrivate.host, owner)).status, 200, "A's preview still answers");
  }

  before(async () => {
    platform = await startPlatform({ config: testConfig({ baseDomain: 'localhost' }), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    const appsFolder = path.join(packageRoot, 'test', 'fixtures', 'apps');
    const [echoManifest, runsManifest, echoBundle, runsBundle] = await Promise.all([
      loadManifest({ target: path.join(appsFolder, 'echo.py') }),
      loadManifest({ target: path.join(runFixture('ok'), 'app.py') }),
      bundleOfFolder(appsFolder),
      bundleOfFolder(runFixture('ok')),
    ]);
    echo = echoManifest;
    runsApp = runsManifest;
    for (const bundle of [echoBundle, runsBundle])
      assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    a.echoSha = echoBundle.sha256;
    a.runsSha = runsBundle.sha256;

    // A: the app (a protected and a public endpoint, among others), its preview, a token, a member, a run.
    const deployed = await call('POST', '/api/v1/apps/echo/deployments', { token: owner, json: { manifest: echo.raw, bundle: a.echoSha } });
    assert.equal(deployed.status, 201, deployed.text);
    const urlsOf = (view: { deployments: { workload: string; urls: { path: string; host: string } }[] }, workload: string) => {
      const urls = view.deployments.find((d) => d.workload === workload)!.urls;
      assert.ok(urls.path && urls.host, `${workload} has a path and a host URL: ${JSON.stringify(urls)}`);
      return { path: urls.path, host: urls.host };
    };
    a.urls.private = urlsOf(deployed.json, 'private');
    a.urls.public = urlsOf(deployed.json, 'public');
    const preview = await call('PUT', '/api/v1/apps/echo/preview', {
      token: owner,
      json: { manifest: echo.raw, bundle: a.echoSha, idleTimeoutSeconds: 3600 },
    });
    assert.equal(preview.status, 200, preview.text);
    a.urls.previewPrivate = urlsOf(preview.json, 'private');
    assert.match(a.urls.previewPrivate.host, /^http:\/\/echo-private--preview\.localhost:\d+\/private$/);

    const token = await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'a-ci' } });
    assert.equal(token.status, 201, token.text);
    a.token = { id: token.json.id, secret: token.json.secret };
    const invited = await call('POST', '/api/v1/members', { token: owner, json: { name: a.member.name, role: 'member' } });
    assert.equal(invited.status, 201, invited.text);
    a.member.id = invited.json.member.id;

    const run = await call('POST', '/api/v1/runs', {
      token: owner,
      json: { manifest: runsApp.raw, bundle: a.runsSha, function: 'square', idleTimeoutSeconds: 3600 },
    });
    assert.equal(run.status, 201, run.text);
    a.run = run.json.run.id;
    await until(
      "A's run is ready",
      async () => {
        const status = (await call('GET', `/api/v1/runs/${a.run}`, { token: owner })).json.run.status;
        assert.notEqual(status, 'failed', "A's run failed");
        return status === 'ready';
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    const answered = await callRun(platform.url, owner, a.run, pickledCall([4]));
    assert.equal(unpickled(answered.frames.at(-1)!.pickle!), 16);

    // B: a workspace the owner account creates (and owns), its token there, a person invited into B only, and sessions.
    const created = await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'acme' } });
    assert.equal(created.status, 201, created.text);
    const ownerInB = await call('POST', '/api/v1/workspaces/acme/token', { token: owner, json: {} });
    assert.equal(ownerInB.status, 201, ownerInB.text);
    assert.equal(ownerInB.json.workspace, 'acme');
    b.ownerToken = ownerInB.json.secret;
    const invitedToB = await call('POST', '/api/v1/members', { token: b.ownerToken, json: { name: b.member.name, role: 'member' } });
    assert.equal(invitedToB.status, 201, invitedToB.text);
    b.member.id = invitedToB.json.member.id;
    // The invited person signs in with the link's secret (the part after `#`) and gets a token of her only workspace.
    const signedIn = await call('POST', '/api/v1/sign-in', { json: { secret: String(invitedToB.json.path).split('#')[1] } });
    assert.equal(signedIn.status, 200, signedIn.text);
    assert.deepEqual([signedIn.json.workspace, signedIn.json.account.id], ['acme', b.member.id]);
    b.memberToken = signedIn.json.secret;

    const sessions = platform.controlPlane.sessions;
    const session = async (account: string, workspace: string) => {
      const {
        secret,
        session: { csrf },
      } = await sessions.create(account, workspace);
      return { secret, csrf };
    };
    const ownerAccount = platform.controlPlane.owner.account.id;
    b.memberSession = await session(b.member.id, 'acme');
    b.ownerSession = await session(ownerAccount, 'acme');
    a.session = await session(ownerAccount, 'default');
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it("API by path: B's tokens get 404 not_found for A's app, pause/resume, workload stop/delete, logs (JSON and event stream), interface and preview — word for word the answer for an app that does not exist — and A is unchanged", async () => {
    const routes: [string, string, Record<string, string>?][] = [
      ['GET', '/api/v1/apps/{app}'],
      ['GET', '/api/v1/apps/{app}/interface'],
      ['GET', '/api/v1/apps/{app}/deployments/private/logs'],
      ['GET', '/api/v1/apps/{app}/deployments/private/logs', SSE],
      ['GET', '/api/v1/apps/{app}/preview'],
      ['GET', '/api/v1/apps/{app}/preview/deployments/private/logs'],
      ['GET', '/api/v1/apps/{app}/preview/deployments/private/logs', SSE],
      ['POST', '/api/v1/apps/{app}/pause'],
      ['POST', '/api/v1/apps/{app}/resume'],
      ['POST', '/api/v1/apps/{app}/deployments/private/stop'],
      ['DELETE', '/api/v1/apps/{app}/deployments/private'],
      ['DELETE', '/api/v1/apps/{app}/preview'],
      ['DELETE', '/api/v1/apps/{app}'],
    ];
    // The control: A's own token gets the objects at these very paths.
    assert.equal((await ask('GET', '/api/v1/apps/echo', { token: owner })).status, 200);
    assert.equal((await ask('GET', '/api/v1/apps/echo/deployments/private/logs', { token: owner, headers: SSE })).status, 200);
    assert.equal((await ask('GET', '/api/v1/apps/echo/preview/deployments/private/logs', { token: owner })).status, 200);
    for (const { who, token } of bTokens()) {
      for (const [method, template, headers] of routes) {
        const what = `${who}: ${method} ${template.replace('{app}', 'echo')}${headers ? ' (event stream)' : ''}`;
        const got = await ask(method, template.replace('{app}', 'echo'), { token, headers: headers ?? {} });
        const missing = await ask(method, template.replace('{app}', NONE.app), { token, headers: headers ?? {} });
        sameAsMissing(what, got, missing, [['echo', NONE.app]]);
      }
    }
    await assertAUntouched();
  });

  it("API: B's tokens cannot deploy, plan, preview or run A's code by its sha256: 404, as for a bundle nobody uploaded", async () => {
    for (const { who, token } of bTokens()) {
      const tries: [string, string, LoadedManifest, string, Record<string, unknown>][] = [
        ['POST', '/api/v1/apps/echo/deployments', echo, a.echoSha, {}],
        ['POST', '/api/v1/apps/echo/deployments/plan', echo, a.echoSha, {}],
        ['PUT', '/api/v1/apps/echo/preview', echo, a.echoSha, {}],
        ['POST', '/api/v1/runs', runsApp, a.runsSha, { function: 'square' }],
      ];
      for (const [method, route, manifest, sha256, extra] of tries) {
        const got = await ask(method, route, { token, json: { manifest: manifest.raw, bundle: sha256, ...extra } });
        const missing = await ask(method, route, { token, json: { manifest: manifest.raw, bundle: NONE.sha256, ...extra } });
        sameAsMissing(`${who}: ${method} ${route} with A's bundle`, got, missing, [[sha256, NONE.sha256]]);
      }
    }
    assert.deepEqual((await call('GET', '/api/v1/apps', { token: b.ownerToken })).json, { apps: [] }, 'nothing was deployed in B');
    await assertAUntouched();
  });

  it("API by id: B's tokens get 404 for A's token, bundles, run (and its calls and logs) and member, as for ids that do not exist; A's token still works", async () => {
    // The control: A's token gets these objects by the same ids.
    for (const route of [
      `/api/v1/bundles/${a.echoSha}`,
      `/api/v1/bundles/${a.runsSha}`,
      `/api/v1/runs/${a.run}`,
      `/api/v1/runs/${a.run}/logs`,
    ]) {
      assert.equal((await ask('GET', route, { token: a.token.secret })).status, 200, `A's token: GET ${route}`);
    }
    for (const { who, token } of bTokens()) {
      const tries: [string, string, string, string, Ask?][] = [
        ['DELETE', '/api/v1/tokens/{id}', a.token.id, NONE.token],
        ['GET', '/api/v1/bundles/{id}', a.echoSha, NONE.sha256],
        ['HEAD', '/api/v1/bundles/{id}', a.echoSha, NONE.sha256],
        ['GET', '/api/v1/bundles/{id}', a.runsSha, NONE.sha256],
        ['GET', '/api/v1/runs/{id}', a.run, NONE.run],
        ['GET', '/api/v1/runs/{id}/logs', a.run, NONE.run],
        ['GET', '/api/v1/runs/{id}/logs', a.run, NONE.run, { headers: SSE }],
        [
          'POST',
          '/api/v1/runs/{id}/calls',
          a.run,
          NONE.run,
          { body: pickledCall([5]), headers: { 'Content-Type': 'application/vnd.svc.call+pickle' } },
        ],
        ['DELETE', '/api/v1/runs/{id}', a.run, NONE.run],
      ];
      for (const [method, template, real, fake, options] of tries) {
        const got = await ask(method, template.replace('{id}', real), { token, ...options });
        const missing = await ask(method, template.replace('{id}', fake), { token, ...options });
        sameAsMissing(
          `${who}: ${method} ${template.replace('{id}', real)}${options?.headers?.Accept ? ' (event stream)' : ''}`,
          got,
          missing,
          [[real, fake]],
        );
      }
    }
    // Members: B's owner gets 404 for A's member; B's member may remove nobody (403 forbidden), whoever it names.
    sameAsMissing(
      "B's owner: DELETE /api/v1/members/<A's member>",
      await ask('DELETE', `/api/v1/members/${a.member.id}`, { token: b.ownerToken }),
      await ask('DELETE', `/api/v1/members/${NONE.member}`, { token: b.ownerToken }),
      [[a.member.id, NONE.member]],
    );
    sameAsMissing(
      "B's member: DELETE /api/v1/members/<A's member>",
      await ask('DELETE', `/api/v1/members/${a.member.id}`, { token: b.memberToken }),
      await ask('DELETE', `/api/v1/members/${NONE.member}`, { token: b.memberToken }),
      [[a.member.id, NONE.member]],
      { status: 403, code: 'forbidden' },
    );
    // A person of B only gets no token of A's workspace.
    sameAsMissing(
      "B's member: POST /api/v1/workspaces/default/token",
      await ask('POST', '/api/v1/workspaces/default/token', { token: b.memberToken, json: {} }),
      await ask('POST', `/api/v1/workspaces/${NONE.workspace}/token`, { token: b.memberToken, json: {} }),
      [['default', NONE.workspace]],
    );

    // A's token, run and member are all still there and work.
    assert.equal(unpickled((await callRun(platform.url, a.token.secret, a.run, pickledCall([3]))).frames.at(-1)!.pickle!), 9);
    assert.equal((await ask('GET', `/api/v1/bundles/${a.echoSha}`, { token: a.token.secret })).status, 200);
    await assertAUntouched();
  });

  it("API listings of B (apps, deployments, tokens, runs, members, workspaces) show none of A's objects", async () => {
    for (const { who, token } of bTokens()) {
      const listed = async (route: string) => {
        const answer = await ask('GET', route, { token });
        assert.equal(answer.status, 200, `${who}: GET ${route}: ${answer.text}`);
        showsNothingOfA(`${who}: GET ${route}`, answer.text);
        return answer.json;
      };
      assert.deepEqual(await listed('/api/v1/apps'), { apps: [] });
      assert.deepEqual(await listed('/api/v1/deployments'), { deployments: [] });
      assert.deepEqual(await listed('/api/v1/runs'), { runs: [] });
      const tokens = (await listed('/api/v1/tokens')).tokens as { id: string; workspace: string }[];
      assert.ok(tokens.length >= 2, JSON.stringify(tokens));
      assert.deepEqual([...new Set(tokens.map((t) => t.workspace))], ['acme']);
      const members = (await listed('/api/v1/members')).members as { id: string }[];
      assert.deepEqual(members.map((m) => m.id).sort(), [platform.controlPlane.owner.account.id, b.member.id].sort());
    }
    const workspaces = (await ask('GET', '/api/v1/workspaces', { token: b.memberToken })).json;
    assert.deepEqual(
      { current: workspaces.current, names: workspaces.workspaces.map((w: { name: string }) => w.name) },
      { current: 'acme', names: ['acme'] },
    );
  });

  it("workload URLs: B's tokens are refused with 404 not_found on A's protected endpoint and its preview, by path and by host name; A's token gets 200", async () => {
    const urls = [
      ['the protected endpoint by path', a.urls.private.path],
      ['the protected endpoint by host name', a.urls.private.host],
      ["the preview's protected endpoint by path", a.urls.previewPrivate.path],
      ["the preview's protected endpoint by host name", a.urls.previewPrivate.host],
    ] as const;
    const get = (url: string, token?: string) =>
      url.startsWith(platform.url) ? ask('GET', url.slice(platform.url.length), token === undefined ? {} : { token }) : askHost(url, token);
    for (const [what, url] of urls) {
      assert.equal((await get(url, a.token.secret)).status, 200, `A's token on ${what} (${url})`);
      assert.equal((await get(url)).status, 401, `no token on ${what}`);
      for (const { who, token } of bTokens()) {
        const refused = await get(url, token);
        assert.equal(refused.status, 404, `${who} on ${what} (${url}): ${refused.text}`);
        assert.equal(refused.json?.error?.code, 'not_found', `${who} on ${what}: ${refused.text}`);
        assert.ok(!refused.text.includes('"headers"'), `${who} on ${what} reached the container: ${refused.text}`);
      }
    }
    // A public endpoint answers anyone, by design (authorized=False), B's token included.
    for (const url of [a.urls.public.path, a.urls.public.host]) assert.equal((await get(url, b.memberToken)).status, 200, url);
  });

  it("workload URLs: B's 404 on A's protected endpoint is word for word the 404 for a URL nothing serves, by path and by host name (else it tells B the workload exists)", async () => {
    const port = new URL(platform.url).port;
    const differences: string[] = [];
    for (const { who, token } of bTokens()) {
      const byPath = await ask('GET', new URL(a.urls.private.path).pathname, { token });
      const nothingByPath = await ask('GET', new URL(a.urls.private.path).pathname.replace('/echo/', `/${NONE.app}/`), { token });
      const byHost = await askHost(a.urls.private.host, token);
      const nothingByHost = await askHost(`http://${NONE.app}-private.localhost:${port}/private`, token);
      const previewByPath = await ask('GET', new URL(a.urls.previewPrivate.path).pathname, { token });
      const nothingPreviewByPath = await ask(
        'GET',
        new URL(a.urls.previewPrivate.path).pathname.replace('/echo--preview/', `/${NONE.app}--preview/`),
        { token },
      );
      const previewByHost = await askHost(a.urls.previewPrivate.host, token);
      const nothingPreviewByHost = await askHost(`http://${NONE.app}-private--preview.localhost:${port}/private`, token);
      const cases = [
        [`${who}: A's protected endpoint by path`, byPath, nothingByPath, [['echo', NONE.app]]],
        [`${who}: A's protected endpoint by host name`, byHost, nothingByHost, []],
        [`${who}: A's preview's protected endpoint by path`, previewByPath, nothingPreviewByPath, [['echo', NONE.app]]],
        [`${who}: A's preview's protected endpoint by host name`, previewByHost, nothingPreviewByHost, []],
      ] as const;
      // Every case is tried before the test fails, so that its message lists all that differ.
      for (const [what, got, missing, swaps] of cases) {
        try {
          sameAsMissing(what, got, missing, swaps);
        } catch {
          differences.push(`${what}:\n    got     ${got.status} ${got.text}\n    missing ${missing.status} ${missing.text}`);
        }
      }
    }
    assert.ok(
      differences.length === 0,
      `B's refusal tells an existing workload of A from a URL nothing serves:\n  ${differences.join('\n  ')}`,
    );
  });

  it("dashboard: B's sessions get a 404 page for A's app page, workload page and its charts, logs page, log events, confirm pages, token revoke page and member remove page, as for objects that do not exist", async () => {
    const pages: [string, string, string][] = [
      ['/dashboard/apps/{}', 'echo', NONE.app],
      ['/dashboard/apps/{}/workloads/private', 'echo', NONE.app],
      // The charts, as the workload page's script asks for them: with the session's CSRF token.
      ['/dashboard/apps/{}/workloads/private/charts?csrf={csrf}', 'echo', NONE.app],
      ['/dashboard/apps/{}/workloads/private/logs', 'echo', NONE.app],
      // The log stream takes the session's CSRF token in its URL, as the logs page gives it (filled in per session below).
      ['/dashboard/apps/{}/workloads/private/logs/events?csrf={csrf}', 'echo', NONE.app],
      ['/dashboard/apps/{}/pause', 'echo', NONE.app],
      ['/dashboard/apps/{}/workloads/private/stop', 'echo', NONE.app],
      ['/dashboard/apps/{}/workloads/private/delete', 'echo', NONE.app],
      ['/dashboard/settings/tokens/{}/revoke', a.token.id, NONE.token],
      ['/dashboard/workspace/members/{}/remove', a.member.id, NONE.member],
    ];
    for (const [template, real] of pages) {
      // The control: the owner's session in A gets each page.
      const path = template.replace('{}', real).replace('{csrf}', encodeURIComponent(a.session.csrf));
      const shown = await ask('GET', path, { session: a.session.secret });
      assert.equal(shown.status, 200, `A's session: GET ${path}: ${shown.text.slice(0, 300)}`);
    }
    for (const { who, secret, csrf } of bSessions()) {
      for (const [pattern, real, fake] of pages) {
        // B's own valid CSRF token: the refusal must come from the object, not from the token.
        const template = pattern.replace('{csrf}', encodeURIComponent(csrf));
        const got = await ask('GET', template.replace('{}', real), { session: secret, headers: { Accept: 'text/html' } });
        const missing = await ask('GET', template.replace('{}', fake), { session: secret, headers: { Accept: 'text/html' } });
        sameAsMissing(`${who}: GET ${template.replace('{}', real)}`, got, missing, [[real, fake]]);
        if (!pattern.includes('/events') && !pattern.includes('/charts')) {
          assert.match(got.type, /^text\/html/, `${who}: GET ${template.replace('{}', real)} answers a page`);
          assert.match(got.text, /<title>Not found · svc<\/title>/, `${who}: GET ${template.replace('{}', real)}`);
        }
      }
    }
  });

  it("dashboard: B's forms with a valid CSRF token on A's action URLs get 404 and change nothing", async () => {
    for (const { who, secret, csrf, owner: isOwner } of bSessions()) {
      const post = (route: string, fields: Record<string, string> = {}) =>
        ask('POST', route, { session: secret, form: { _csrf: csrf, ...fields } });
      const actions: [string, string, string][] = [
        ['/dashboard/apps/{}/pause', 'echo', NONE.app],
        ['/dashboard/apps/{}/resume', 'echo', NONE.app],
        ['/dashboard/apps/{}/workloads/private/stop', 'echo', NONE.app],
        ['/dashboard/apps/{}/workloads/private/delete', 'echo', NONE.app],
        ['/dashboard/settings/tokens/{}/revoke', a.token.id, NONE.token],
      ];
      for (const [template, real, fake] of actions) {
        sameAsMissing(
          `${who}: POST ${template.replace('{}', real)}`,
          await post(template.replace('{}', real)),
          await post(template.replace('{}', fake)),
          [[real, fake]],
        );
      }
      // Removing a person: B's owner finds no such member (404); B's member may remove nobody (403), whoever the form names.
      const removal = '/dashboard/workspace/members/{}/remove';
      sameAsMissing(
        `${who}: POST ${removal.replace('{}', a.member.id)}`,
        await post(removal.replace('{}', a.member.id)),
        await post(removal.replace('{}', NONE.member)),
        [[a.member.id, NONE.member]],
        isOwner ? { status: 404, code: 'not_found' } : { status: 403, code: 'forbidden' },
      );
      if (!isOwner) {
        // Nor can she switch her session into A's workspace.
        sameAsMissing(
          `${who}: POST /dashboard/workspace/switch to default`,
          await post('/dashboard/workspace/switch', { workspace: 'default' }),
          await post('/dashboard/workspace/switch', { workspace: NONE.workspace }),
          [['default', NONE.workspace]],
        );
        const session = await platform.controlPlane.sessions.find(secret);
        assert.equal(session?.workspace, 'acme', 'her session still acts in acme');
      }
    }
    await assertAUntouched();
  });

  it("dashboard: B's app list, token list and workspace page show none of A's objects", async () => {
    for (const { who, secret } of bSessions()) {
      for (const route of ['/dashboard', '/dashboard/settings/tokens', '/dashboard/workspace']) {
        const shown = await ask('GET', route, { session: secret });
        assert.equal(shown.status, 200, `${who}: GET ${route}: ${shown.text.slice(0, 300)}`);
        showsNothingOfA(`${who}: GET ${route}`, shown.text);
      }
      assert.match(
        (await ask('GET', '/dashboard', { session: secret })).text,
        /No app is deployed in acme yet/,
        `${who}: B's app list is empty`,
      );
    }
  });

  it("B's own app of the same name gets its own bundle record, version 1 and URLs; A's token gets 404 there, and deleting it leaves A's app running", async () => {
    const bundle = await bundleOfFolder(path.join(packageRoot, 'test', 'fixtures', 'apps'));
    assert.equal(bundle.sha256, a.echoSha, 'the same code, byte for byte');
    const uploaded = await upload(platform.url, b.ownerToken, bundle.bytes, bundle.sha256);
    assert.deepEqual([uploaded.status, uploaded.json.created], [201, true], 'a new bundle for B: nothing says A has the same one');
    const plan = await ask('POST', '/api/v1/apps/echo/deployments/plan', {
      token: b.ownerToken,
      json: { manifest: echo.raw, bundle: bundle.sha256 },
    });
    assert.equal(plan.status, 200, plan.text);
    assert.deepEqual(
      [...new Set(plan.json.workloads.map((w: { change: string }) => w.change))],
      ['new'],
      "B's plan knows nothing of A's deployment",
    );
    const deployed = await ask('POST', '/api/v1/apps/echo/deployments', {
      token: b.ownerToken,
      json: { manifest: echo.raw, bundle: bundle.sha256 },
    });
    assert.equal(deployed.status, 201, deployed.text);
    const mine = deployed.json.deployments.find((d: { workload: string }) => d.workload === 'private');
    assert.deepEqual(
      mine.versions.map((v: { version: number }) => v.version),
      [1],
      "B's versions are its own",
    );
    assert.equal(mine.urls.path, `${platform.url}/acme/echo/private/private`);
    assert.match(mine.urls.host, /^http:\/\/echo-private--acme\.localhost:\d+\/private$/);
    try {
      assert.equal((await askHost(mine.urls.host, b.memberToken)).status, 200, "B's member reaches B's app");
      for (const url of [mine.urls.path, mine.urls.host] as string[]) {
        const refused = url.startsWith(platform.url)
          ? await ask('GET', url.slice(platform.url.length), { token: a.token.secret })
          : await askHost(url, a.token.secret);
        assert.deepEqual([refused.status, refused.json?.error?.code], [404, 'not_found'], `A's token on B's ${url}`);
      }
      // A's host name still leads to A's app: A's token gets 200 there, B's 404.
      assert.equal((await askHost(a.urls.private.host, a.token.secret)).status, 200);
      assert.equal((await askHost(a.urls.private.host, b.memberToken)).status, 404);
    } finally {
      assert.equal((await ask('DELETE', '/api/v1/apps/echo', { token: b.ownerToken })).status, 204);
    }
    assert.equal((await ask('GET', '/api/v1/apps/echo', { token: b.ownerToken })).status, 404);
    await assertAUntouched();
  });
});

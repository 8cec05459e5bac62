/**
 * The example projects in examples/, each deployed on a real in-process
 * platform (real images, real Python containers) and called the way their
 * README says: HTTP with fetch, WebSockets with `ws`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import path from 'node:path';
import WebSocket from 'ws';
import type { Deployment } from '../../core/services/deployments/types.js';
import type { Stage } from '../../core/model/workload/deployment-ref.js';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { fillLexiconsVolume } from './example-volumes.js';
import { examplesRoot, sdkPythonPath } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { burst } from '../helpers/burst.js';
import { until } from '../helpers/until.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { localDriverOf } from '../helpers/local-driver.js';

const run = promisify(execFile);

const EXAMPLES = ['quickstart', 'asgi-fastapi', 'realtime-chat', 'checkpointed-model', 'autoscaling', 'fan-out', 'model-class'];

const manifestOf = (name: string): Promise<LoadedManifest> => loadManifest({ target: path.join(examplesRoot, name, 'app.py') });

async function deploy(platform: Platform, manifest: LoadedManifest, stage: Stage = 'preview'): Promise<Deployment> {
  return platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage,
    principal: null,
  });
}

function urlOf(deployment: Deployment, workload: string): string {
  const url = deployment.workloads.find((w) => w.name === workload)?.url;
  assert.ok(url, `workload ${workload} has a URL`);
  return url;
}

/** A WebSocket client that queues what it receives, for `next()` to take in order. */
async function connect(url: string, headers: Record<string, string> = {}): Promise<{ socket: WebSocket; next(): Promise<string> }> {
  const socket = new WebSocket(url, { headers });
  const inbox: string[] = [];
  const waiting: ((text: string) => void)[] = [];
  socket.on('message', (data) => {
    const text = data.toString();
    const waiter = waiting.shift();
    if (waiter) waiter(text);
    else inbox.push(text);
  });
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  return { socket, next: () => (inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
}

/** A POST with a JSON body straight to one worker's Unix socket, past the gateway. */
function postToWorker(socketPath: string, urlPath: string, body: unknown): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const request = http.request(
      {
        socketPath,
        path: urlPath,
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) },
      },
      (response) => {
        let answer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (answer += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(answer) }));
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}

describe('examples/: every example project', () => {
  it('has the examples this test covers, no more and no fewer', () => {
    const found = readdirSync(examplesRoot, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    assert.deepEqual(found.sort(), [...EXAMPLES].sort());
  });

  for (const name of EXAMPLES) {
    it(`${name}: has a README with a title and a description, and python -m svc.manifest reads its app`, async function () {
      this.timeout(60_000);
      const readme = readFileSync(path.join(examplesRoot, name, 'README.md'), 'utf8');
      assert.match(readme, /^# \S.*\n\n\S/, 'a title, a blank line, then the first paragraph');
      const manifest = await manifestOf(name).catch((error: Error) => {
        if (name === 'asgi-fastapi' && /No module named 'fastapi'/.test(error.message)) this.skip();
        throw error;
      });
      assert.equal(manifest.spec.name, name, 'the app is named after its folder');
      assert.ok(manifest.spec.workloads.length > 0);
    });
  }
});

describe('examples/ deployed on a real platform', function () {
  this.timeout(300_000);
  let platform: Platform;
  const bearer = () => ({ Authorization: `Bearer ${platform.ownerToken.secret}` });
  const logs: string[] = [];

  before(async () => {
    platform = await startPlatform({ config: testConfig(), logs: (line) => logs.push(`${line.unit} ${line.text}`) });
  });
  after(async () => platform?.close());

  describe('asgi-fastapi', () => {
    let base: string;
    before(async function () {
      const manifest = await manifestOf('asgi-fastapi').catch((error: Error) => {
        // `svc serve` imports the app, so FastAPI must be installed where the tests run (.ci/run installs it).
        if (/No module named 'fastapi'/.test(error.message)) this.skip();
        throw error;
      });
      base = urlOf(await deploy(platform, manifest), 'api');
    });

    it('creates a todo from a JSON body (201), with a link under the workload URL', async () => {
      const created = await fetch(`${base}/todos`, {
        method: 'POST',
        headers: { ...bearer(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'write the docs' }),
      });
      assert.equal(created.status, 201);
      const todo = (await created.json()) as { id: number; title: string; done: boolean; href: string };
      assert.deepEqual(todo, { title: 'write the docs', done: false, id: todo.id, href: `${new URL(base).pathname}/todos/${todo.id}` });

      const fetched = await fetch(`${new URL(base).origin}${todo.href}`, { headers: bearer() });
      assert.equal(fetched.status, 200);
      assert.deepEqual(await fetched.json(), todo);
      const listed = (await (await fetch(`${base}/todos`, { headers: bearer() })).json()) as { id: number }[];
      assert.ok(listed.some((t) => t.id === todo.id));
    });

    it("answers FastAPI's own 404 and 422s: an unknown id, a path parameter of the wrong type, an invalid body", async () => {
      const missing = await fetch(`${base}/todos/999`, { headers: bearer() });
      assert.equal(missing.status, 404);
      assert.deepEqual(await missing.json(), { detail: 'no todo 999' });
      const notAnInt = await fetch(`${base}/todos/abc`, { headers: bearer() });
      assert.equal(notAnInt.status, 422);
      const empty = await fetch(`${base}/todos`, {
        method: 'POST',
        headers: { ...bearer(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: '' }),
      });
      assert.equal(empty.status, 422);
      const body = (await empty.json()) as { detail: { loc: string[] }[] };
      assert.deepEqual(body.detail[0]!.loc, ['body', 'title']);
    });

    it('asks for the bearer token before the app sees anything', async () => {
      const anonymous = await fetch(`${base}/todos`);
      assert.equal(anonymous.status, 401);
      assert.equal(((await anonymous.json()) as { error: { code: string } }).error.code, 'unauthorized');
    });

    it("serves the app's WebSocket route: each message is a todo title, answered with the todo", async () => {
      const client = await connect(`${base.replace(/^http/, 'ws')}/ws`, bearer());
      client.socket.send('buy milk');
      const todo = JSON.parse(await client.next()) as { title: string; done: boolean; id: number; href: string };
      assert.equal(todo.title, 'buy milk');
      assert.equal(todo.done, false);
      assert.equal(todo.href, `${new URL(base).pathname}/todos/${todo.id}`);
      client.socket.send('');
      assert.match((JSON.parse(await client.next()) as { error: string }).error, /at least 1 character/);
      client.socket.close();
      const fetched = await fetch(`${base}/todos/${todo.id}`, { headers: bearer() });
      assert.deepEqual(await fetched.json(), todo, "HTTP and WebSocket share the worker's store");
    });
  });

  describe('realtime-chat', () => {
    let url: string;
    before(async () => {
      url = urlOf(await deploy(platform, await manifestOf('realtime-chat')), 'chat');
    });

    it('streams the answer to each message: typing, one token per word, done', async () => {
      const client = await connect(url, bearer());
      client.socket.send(JSON.stringify({ user: 'Ada', text: 'hello' }));
      const events: { type: string }[] = [];
      do events.push(JSON.parse(await client.next()) as { type: string });
      while (events.at(-1)!.type !== 'done');
      assert.deepEqual(events, [
        { type: 'typing', to: 'Ada' },
        ...'Hello Ada, nice to meet you!'.split(' ').map((text) => ({ type: 'token', text })),
        { type: 'done', words: 6 },
      ]);

      client.socket.send(JSON.stringify({ user: 'Bob', text: 'how are you' }));
      const second: { type: string; text?: string; words?: number }[] = [];
      do second.push(JSON.parse(await client.next()) as { type: string });
      while (second.at(-1)!.type !== 'done');
      const tokens = second.filter((e) => e.type === 'token').map((e) => e.text);
      assert.equal(tokens.join(' '), 'Bob, you said 3 words: how are you');
      assert.equal(second.at(-1)!.words, tokens.length);
      client.socket.close();
    });

    it('answers a message that does not fit ChatMessage with an error message, and the socket stays open', async () => {
      const client = await connect(`${url}?token=${platform.ownerToken.secret}`);
      client.socket.send(JSON.stringify({ user: 'Ada' }));
      const error = JSON.parse(await client.next()) as { error: { code: string; message: string } };
      assert.equal(error.error.code, 'invalid_arguments');
      assert.match(error.error.message, /text/);
      client.socket.send('not json');
      assert.equal((JSON.parse(await client.next()) as { error: { code: string } }).error.code, 'invalid_json');
      client.socket.send(JSON.stringify({ user: 'Ada', text: 'hi' }));
      assert.deepEqual(JSON.parse(await client.next()), { type: 'typing', to: 'Ada' });
      client.socket.close();
    });

    it('refuses a connection without a token', async () => {
      await assert.rejects(connect(url), /Unexpected server response: 401/);
    });
  });

  describe('checkpointed-model', () => {
    let deployment: Deployment;
    before(async () => {
      deployment = await deploy(platform, await manifestOf('checkpointed-model'));
    });

    it('answers with the on_start value, loaded once in the checkpoint template', async () => {
      const response = await fetch(urlOf(deployment, 'predict'), {
        method: 'POST',
        headers: { ...bearer(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ text: 'I love this great product!' }),
      });
      assert.equal(response.status, 200);
      const prediction = (await response.json()) as {
        label: string;
        score: number;
        model: string;
        loaded_by_pid: number;
        served_by_pid: number;
      };
      assert.equal(prediction.label, 'positive');
      assert.equal(prediction.score, 3.5);
      assert.equal(prediction.model, 'tiny-sentiment@1.0');
      const template = localDriverOf(platform).template(deployment.units[0]!);
      assert.equal(template?.state, 'ready');
      assert.equal(prediction.loaded_by_pid, template.pid, 'on_start ran in the template');
      assert.notEqual(prediction.served_by_pid, template.pid, 'a forked worker served the request');
    });

    it('starts a second container from the checkpoint: it has the model without loading it again', async () => {
      const unit = deployment.units[0]!;
      const template = localDriverOf(platform).template(unit)!;
      await platform.driver.scale(unit, 2);
      const containers = platform.driver.status(unit);
      assert.equal(containers.length, 2);
      assert.deepEqual(
        containers.map((c) => c.startedFrom),
        ['template', 'template'],
      );
      assert.equal(logs.filter((line) => /forked from checkpoint template/.test(line) && line.startsWith(unit)).length, 2);
      // Ask the new container's worker itself, past the gateway (which would pick the older container).
      const answer = await postToWorker(containers[1]!.workers[0]!.socketPath, '/predict', { text: 'awful and slow' });
      assert.equal(answer.status, 200);
      assert.equal(answer.json.label, 'negative');
      assert.equal(answer.json.loaded_by_pid, template.pid, 'the model came from the template, not from a second load');
      // The driver learns a worker's pid from the worker's own event, which may come a moment after it serves.
      await until('the worker reported its pid', () => platform.driver.status(unit)[1]?.workers[0]?.pid !== undefined, 5_000);
      assert.equal(answer.json.served_by_pid, platform.driver.status(unit)[1]!.workers[0]!.pid);
    });
  });

  describe('autoscaling', () => {
    let deployment: Deployment;
    const unit = () => deployment.units[0]!;
    before(async () => {
      deployment = await deploy(platform, await manifestOf('autoscaling'));
    });

    const BURST = 24;
    it('admits 4 slots + max_pending_tasks 8 of a burst of 24 (the rest get 429 queue_full) and starts more containers', async () => {
      assert.equal(
        platform.driver.status(unit()).filter((c) => c.state === 'healthy').length,
        1,
        'min_containers=1: one container after the deploy',
      );
      let most = 0;
      let done = false;
      const watching = (async () => {
        while (!done) {
          most = Math.max(most, platform.driver.status(unit()).filter((c) => c.state !== 'stopping').length);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      // All at once: a container forked from a zygote starts fast enough to take requests of a trickling burst. 24 is
      // more than even max_containers=3 can hold (3 x 4 slots + 8 queued = 20), so some are refused however it trickles.
      const answers = (await burst(`${urlOf(deployment, 'work')}?seconds=2`, BURST)).map((answer) => ({
        status: answer.status,
        retryAfter: answer.headers['retry-after'] ?? null,
        body: JSON.parse(answer.body) as { container_pid?: number; worker_pid?: number; slept?: number; error?: { code: string } },
      }));
      done = true;
      await watching;
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      const first = platform.driver.status(unit())[0]!.pid;
      // 2 workers x concurrency 2 on the one healthy container, plus max_pending_tasks=8 waiting; on a loaded machine the
      // burst's last requests may reach the gateway after a container forked from the zygote (~30 ms) took its slots.
      const joined = ok.filter((a) => a.body.container_pid !== first).length;
      assert.ok(
        ok.length >= 12 && ok.length - 12 <= joined,
        `12 admitted, and more only as new containers took them: ${ok.length}, ${joined} by new ones`,
      );
      assert.equal(refused.length, BURST - ok.length);
      assert.ok(refused.length > 0, 'the rest of the burst was refused');
      for (const answer of refused) {
        assert.equal(answer.body.error?.code, 'queue_full');
        assert.equal(answer.retryAfter, '1');
      }
      assert.ok(most >= 2 && most <= 3, `the queue started more containers, up to max_containers=3 (saw ${most})`);
      const containerPids = new Set(platform.driver.status(unit()).map((c) => c.pid));
      for (const answer of ok) {
        assert.equal(answer.body.slept, 2);
        assert.ok(containerPids.has(answer.body.container_pid), 'container_pid names one of the containers');
        assert.notEqual(answer.body.worker_pid, answer.body.container_pid);
      }
    });

    it('scales back down to min_containers after keep_warm', async () => {
      await until('back to one container', () => platform.driver.status(unit()).length === 1, 60_000);
      const response = await fetch(`${urlOf(deployment, 'work')}?seconds=0`);
      assert.equal(response.status, 200);
    });
  });

  /** `python app.py [args]` in an example's folder, signed in to the test's platform as its README says. */
  async function runScript(example: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
    const { SVC_SERVER: _server, SVC_TOKEN: _token, ...inherited } = process.env;
    const env = {
      ...inherited,
      SVC_SERVER: platform.url,
      SVC_TOKEN: platform.ownerToken.secret,
      SVC_CONFIG_DIR: tempDir(`svc-${example}-config-`),
      PYTHONPATH: sdkPythonPath,
    };
    return run(process.env.SVC_PYTHON ?? 'python3', ['app.py', ...args], { cwd: path.join(examplesRoot, example), env });
  }

  describe('model-class', () => {
    it('runs as its README says: each lexicon in its own pool, loaded once per worker', async () => {
      const { stdout, stderr } = await runScript('model-class', []);
      assert.deepEqual(stdout.split('\n'), [
        'one: 2.5',
        'map: [4.0, 0.5, -2.0, 0.0]',
        'strict: [2.0, -0.5, -3.0, -2.0]',
        'spawned: -4.0',
        '',
      ]);
      assert.match(stderr, /two pools: True/);
    });

    it('serves its @svc.endpoint method over HTTP once deployed, on an instance its enter method loaded', async () => {
      // The volume its workers mount, as the script (or `svc volume put lexicons models/`) fills it.
      await fillLexiconsVolume(platform.url, platform.ownerToken.secret);
      // Deployed (what `svc deploy` does): the stage the typed clients' interface describes.
      const deployment = await deploy(platform, await manifestOf('model-class'), 'deployed');
      const rate = (text: string) =>
        fetch(urlOf(deployment, 'sentiment-rate'), {
          method: 'POST',
          headers: { ...bearer(), 'Content-Type': 'application/json' },
          body: JSON.stringify({ text }),
        });
      const answer = await rate('I love it');
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { lexicon: 'basic', score: 2, label: 'positive' });
      assert.deepEqual(await (await rate('awful')).json(), { lexicon: 'basic', score: -2, label: 'negative' });
      assert.equal((await rate('')).status, 200);
      const missing = await fetch(urlOf(deployment, 'sentiment-rate'), {
        method: 'POST',
        headers: { ...bearer(), 'Content-Type': 'application/json' },
        body: '{}',
      });
      assert.equal(missing.status, 422, 'a missing argument is refused as for any endpoint');
      const loaded = logs.filter((line) => /sentiment-rate.*loaded the basic lexicon/.test(line));
      assert.equal(loaded.length, 1, `loaded once: ${loaded.join(' / ')}`);
      // What clients and the dashboard see of the class: its methods, and the endpoint with the method's own signature.
      const iface = (await (await fetch(`${platform.url}/api/v1/apps/model-class/interface`, { headers: bearer() })).json()) as any;
      const byName = Object.fromEntries(iface.workloads.map((w: any) => [w.name, w]));
      assert.deepEqual(byName.sentiment?.methodsOfClass, ['score', 'worker']);
      assert.equal(byName['sentiment-rate']?.methodsOfClass, undefined);
      assert.deepEqual(byName['sentiment-rate']?.parameters.required, ['text']);
      const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
      const appPage = await (
        await fetch(`${platform.url}/dashboard/apps/model-class`, { headers: { Cookie: `svc_session=${secret}` } })
      ).text();
      // Each workload's name links to its page (its facts and charts).
      assert.match(
        appPage,
        /<th scope="row"><a href="\/dashboard\/apps\/model-class\/workloads\/sentiment">sentiment<\/a><\/th><td>class \(score, worker\)<\/td>/,
      );
      assert.match(appPage, /<th scope="row"><a href="[^"]+\/sentiment-rate">sentiment-rate<\/a><\/th><td>endpoint \(method rate\)<\/td>/);
    });
  });

  describe('fan-out', () => {
    it("runs as its README says: python app.py against the server prints the maps' results", async () => {
      const { stdout } = await runScript('fan-out', ['40']);
      assert.deepEqual(stdout.split('\n'), [
        '40 fingerprints, in input order; the first: 663cd0bd4335d329',
        "roots: [2.0, ValueError('no real square root of -1'), 3.0]",
        'hello',
        'bye bye',
        'starmap: [None]',
        '',
      ]);
    });
  });
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pythonBaseImageLayout } from '../fixtures/python-base-image.js';
import { sha256, writeOciLayout, type LayerBlob } from '../fixtures/oci-layout.js';
import { writeLayer } from '../fixtures/tar-writer.js';
import { testCacheDir } from '../helpers/config.js';
import { mountsUnder } from './nomad/docker/container-rootfs.js';
import { unpackLayers } from './nomad/docker/layer-unpack.js';
import { OciLayoutImageSource, RegistryImageSource, startNomadStandin, type NomadStandin } from './nomad/index.js';
import { until as untilWithin } from '../helpers/until.js';

/** Docker allocations unpack an image first: a longer default wait. */
const until = <T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> =>
  untilWithin(what, probe, timeoutMs);

const S = 1_000_000_000;
const APP_IMAGE = 'svc/app:test';

/** Answers GET /env (its environment as JSON) and GET /exists?path= and /read?path= on the port given as argv[1]. */
const SERVE_PY = `
import http.server, json, os, sys, urllib.parse
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        target = urllib.parse.parse_qs(url.query).get('path', [''])[0]
        if url.path == '/env':
            body = json.dumps(dict(os.environ))
        elif url.path == '/exists':
            body = json.dumps(os.path.exists(target))
        elif url.path == '/read':
            body = json.dumps(open(target).read())
        elif url.path == '/cwd':
            body = json.dumps(os.getcwd())
        else:
            body = 'null'
        data = body.encode()
        self.send_response(200)
        self.send_header('content-type', 'application/json')
        self.send_header('content-length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args):
        pass
print('serving on', sys.argv[1], flush=True)
http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), Handler).serve_forever()
`;

interface ImageParts {
  readonly config: Record<string, any>;
  readonly layers: LayerBlob[];
}

/** The config and layers of the one image in a layout, to build another image on top of it. */
function readLayout(layoutDir: string): ImageParts {
  const blob = (digest: string) => path.join(layoutDir, 'blobs', 'sha256', digest.slice('sha256:'.length));
  const index = JSON.parse(readFileSync(path.join(layoutDir, 'index.json'), 'utf8'));
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0].digest), 'utf8'));
  const config = JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8'));
  const layers = manifest.layers.map((l: any, i: number) => ({
    file: blob(l.digest),
    digest: l.digest,
    size: l.size,
    diffId: config.rootfs.diff_ids[i],
  }));
  const { rootfs: _rootfs, ...rest } = config;
  return { config: rest, layers };
}

function job(id: string, task: Record<string, unknown>): Record<string, unknown> {
  return {
    ID: id,
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'web',
        Count: 1,
        Update: { MaxParallel: 0 },
        RestartPolicy: { Attempts: 0, Delay: 1 * S, Interval: 10 * S, Mode: 'fail' },
        Networks: [{ DynamicPorts: [{ Label: 'http' }] }],
        Tasks: [{ Name: 'app', Driver: 'docker', KillTimeout: 2 * S, ...task }],
      },
    ],
  };
}

async function call(base: string, method: string, p: string, body?: unknown): Promise<any> {
  const response = await fetch(base + p, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

async function allocOf(base: string, id: string, status: string): Promise<any> {
  return until(`a ${status} allocation of ${id}`, async () => {
    const list = (await call(base, 'GET', `/v1/job/${id}/allocations`)) as any[];
    const found = list.find((a) => a.ClientStatus === status);
    return found ? call(base, 'GET', `/v1/allocation/${found.ID}`) : undefined;
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A registry per the OCI distribution spec serving one layout under `repo`: tags give an image
 * index, digests give blobs (through a 307 to another path); every request needs a Bearer token
 * from /token, which asks for Basic credentials.
 */
function specRegistry(layoutDir: string, repo: string, corrupt: Set<string>): Server {
  const blob = (digest: string) => path.join(layoutDir, 'blobs', 'sha256', digest.slice('sha256:'.length));
  const index = JSON.parse(readFileSync(path.join(layoutDir, 'index.json'), 'utf8'));
  const send = (res: ServerResponse, status: number, body: Buffer | string, headers: Record<string, string> = {}) => {
    res.writeHead(status, headers);
    res.end(body);
  };
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const origin = `http://${req.headers.host}`;
    if (url.pathname === '/token') {
      const ok = req.headers.authorization === `Basic ${Buffer.from('puller:secret').toString('base64')}`;
      return ok ? send(res, 200, JSON.stringify({ token: 'tok-1' }), { 'content-type': 'application/json' }) : send(res, 401, '{}');
    }
    if (req.headers.authorization !== 'Bearer tok-1') {
      return send(res, 401, JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }), {
        'www-authenticate': `Bearer realm="${origin}/token",service="test-registry",scope="repository:${repo}:pull"`,
      });
    }
    const prefix = `/v2/${repo}/`;
    if (url.pathname.startsWith('/data/')) {
      const digest = url.pathname.slice('/data/'.length);
      let bytes = readFileSync(blob(digest));
      if (corrupt.has(digest)) bytes = Buffer.concat([bytes, Buffer.from('x')]);
      return send(res, 200, bytes, { 'content-type': 'application/octet-stream' });
    }
    if (url.pathname.startsWith(`${prefix}blobs/`)) {
      const digest = url.pathname.slice(`${prefix}blobs/`.length);
      if (!existsSync(blob(digest)))
        return send(res, 404, JSON.stringify({ errors: [{ code: 'BLOB_UNKNOWN', message: 'blob unknown to registry' }] }));
      res.writeHead(307, { location: `${origin}/data/${digest}` });
      return res.end();
    }
    if (url.pathname.startsWith(`${prefix}manifests/`)) {
      const reference = url.pathname.slice(`${prefix}manifests/`.length);
      if (reference.startsWith('sha256:')) {
        const entry = index.manifests.find((m: any) => m.digest === reference);
        if (!entry) return send(res, 404, JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] }));
        return send(res, 200, readFileSync(blob(reference)), { 'content-type': entry.mediaType, 'docker-content-digest': reference });
      }
      if (reference !== 'latest')
        return send(res, 404, JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] }));
      const body = JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: index.manifests });
      return send(res, 200, body, { 'content-type': 'application/vnd.oci.image.index.v1+json', 'docker-content-digest': sha256(body) });
    }
    return send(res, 404, '');
  });
}

describe('Nomad stand-in: docker driver', () => {
  let work: string;
  let baseLayout: string;
  let appLayout: string;

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'nomad-docker-'));
    baseLayout = await pythonBaseImageLayout(testCacheDir);
    const base = readLayout(baseLayout);
    // The app layer: the server script, and a whiteout deleting the base image's /etc/group.
    const appLayer = await writeLayer(path.join(work, 'app.tar.gz'), [
      { type: 'dir', name: 'opt/' },
      { type: 'dir', name: 'opt/app/' },
      { type: 'file', name: 'opt/app/serve.py', content: SERVE_PY },
      { type: 'file', name: 'etc/.wh.group', content: '' },
    ]);
    const config = {
      ...base.config,
      config: { ...base.config.config, Env: [...base.config.config.Env, 'APP_GREETING=from-image'], WorkingDir: '/opt/app' },
    };
    appLayout = path.join(work, 'app-layout');
    writeOciLayout(appLayout, APP_IMAGE, config, [...base.layers, appLayer]);
  });

  after(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it('the Python base image runs the stdlib chrooted into its unpacked layers', async () => {
    const root = path.join(work, 'base-rootfs');
    await unpackLayers(
      root,
      readLayout(baseLayout).layers.map((l) => l.file),
    );
    const out = execFileSync(
      '/usr/sbin/chroot',
      [root, 'python', '-c', "import ssl, ctypes, sqlite3, zlib, json, asyncio, hashlib; print('ok')"],
      { env: { PATH: '/usr/local/bin:/usr/bin:/bin' } },
    );
    assert.equal(out.toString().trim(), 'ok');
    assert.equal(existsSync(path.join(root, 'etc/group')), true);
    rmSync(root, { recursive: true, force: true });
  });

  it('layer entries cannot write outside the rootfs; whiteouts and opaque directories delete lower files', async () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'nomad-docker-outside-'));
    const root = path.join(work, 'hostile', 'rootfs');
    try {
      const lower = await writeLayer(path.join(work, 'lower.tar.gz'), [
        { type: 'dir', name: 'data/' },
        { type: 'file', name: 'data/old.txt', content: 'old' },
        { type: 'file', name: 'keep.txt', content: 'keep' },
        { type: 'file', name: 'gone.txt', content: 'gone' },
      ]);
      const upper = await writeLayer(path.join(work, 'upper.tar.gz'), [
        { type: 'file', name: '../escape.txt', content: 'escaped?' },
        { type: 'symlink', name: 'evil', target: outside },
        { type: 'file', name: 'evil/pwned.txt', content: 'pwned?' },
        { type: 'symlink', name: 'up', target: '../../..' },
        { type: 'file', name: 'up/up.txt', content: 'up?' },
        { type: 'hardlink', name: 'passwd-link', target: '../../../../keep.txt' },
        { type: 'file', name: 'data/new.txt', content: 'new' },
        { type: 'file', name: 'data/.wh..wh..opq', content: '' },
        { type: 'file', name: '.wh.gone.txt', content: '' },
      ]);
      await unpackLayers(root, [lower.file, upper.file]);
      assert.equal(existsSync(path.join(work, 'hostile', 'escape.txt')), false);
      assert.equal(readFileSync(path.join(root, 'escape.txt'), 'utf8'), 'escaped?');
      assert.equal(existsSync(path.join(outside, 'pwned.txt')), false);
      assert.equal(readFileSync(path.join(root, outside, 'pwned.txt'), 'utf8'), 'pwned?');
      assert.equal(readFileSync(path.join(root, 'up.txt'), 'utf8'), 'up?');
      assert.equal(readFileSync(path.join(root, 'passwd-link'), 'utf8'), 'keep');
      assert.equal(existsSync(path.join(root, 'data/old.txt')), false);
      assert.equal(readFileSync(path.join(root, 'data/new.txt'), 'utf8'), 'new');
      assert.equal(existsSync(path.join(root, 'gone.txt')), false);
      assert.equal(existsSync(path.join(root, '.wh.gone.txt')), false);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  describe('allocations', () => {
    let nomad: NomadStandin;
    let artifacts: Server;
    let artifactsUrl: string;

    before(async () => {
      process.env.SVC_TEST_HOST_ONLY = 'must-not-leak';
      nomad = await startNomadStandin({ dataDir: path.join(work, 'nomad'), docker: { imageSource: new OciLayoutImageSource(appLayout) } });
      artifacts = createServer((_req, res) => res.end('artifact body'));
      artifactsUrl = await listen(artifacts);
    });

    after(async () => {
      delete process.env.SVC_TEST_HOST_ONLY;
      await nomad?.close();
      artifacts?.close();
    });

    it('runs the image chrooted: port on 127.0.0.1, container env and paths, artifacts at /local, whiteouts; stop kills it and removes the rootfs', async () => {
      await call(nomad.url, 'PUT', '/v1/jobs', {
        Job: job('py-docker', {
          Config: { image: APP_IMAGE, command: 'python3', args: ['/opt/app/serve.py', '${NOMAD_PORT_http}'] },
          Env: { TASK_GREETING: 'hi from ${NOMAD_TASK_NAME}' },
          Artifacts: [{ GetterSource: `${artifactsUrl}/hello.txt`, RelativeDest: 'local/' }],
        }),
      });
      const alloc = await allocOf(nomad.url, 'py-docker', 'running');
      const port = alloc.AllocatedResources.Shared.Ports[0].Value;
      const ask = async (p: string) => (await fetch(`http://127.0.0.1:${port}${p}`)).json() as Promise<any>;
      const env = await until('the container answering', () => ask('/env'));
      assert.equal(env.NOMAD_TASK_DIR, '/local');
      assert.equal(env.NOMAD_ALLOC_DIR, '/alloc');
      assert.equal(env.NOMAD_SECRETS_DIR, '/secrets');
      assert.equal(env.NOMAD_PORT_http, String(port));
      assert.equal(env.NOMAD_HOST_PORT_http, String(port));
      assert.equal(env.NOMAD_ADDR_http, `127.0.0.1:${port}`);
      assert.equal(env.APP_GREETING, 'from-image');
      assert.equal(env.PATH, '/usr/local/bin:/usr/bin:/bin');
      assert.equal(env.TASK_GREETING, 'hi from app');
      assert.equal(env.SVC_TEST_HOST_ONLY, undefined);
      assert.equal(await ask('/cwd'), '/opt/app');
      assert.equal(await ask('/read?path=/local/hello.txt'), 'artifact body');
      assert.equal(await ask('/exists?path=/etc/group'), false);
      assert.equal(await ask('/exists?path=/etc/passwd'), true);
      assert.equal(await ask('/exists?path=/dev/null'), true);
      const events = alloc.TaskStates.app.Events.map((e: any) => e.DriverMessage || e.Type);
      assert.deepEqual(events.slice(events.indexOf('Downloading image')), ['Downloading image', 'Started']);
      const logs = path.join(work, 'nomad', 'alloc', alloc.ID, 'alloc', 'logs', 'app.stdout.0');
      assert.match(readFileSync(logs, 'utf8'), new RegExp(`serving on ${port}`));
      const rootfs = path.join(work, 'nomad', 'alloc', alloc.ID, 'app', 'rootfs');
      assert.equal(existsSync(path.join(rootfs, 'opt/app/serve.py')), true);

      await call(nomad.url, 'DELETE', '/v1/job/py-docker');
      await allocOf(nomad.url, 'py-docker', 'complete');
      await until('the rootfs removed', async () => !existsSync(rootfs));
      await assert.rejects(fetch(`http://127.0.0.1:${port}/env`));
      assert.deepEqual(mountsUnder(path.join(work, 'nomad')), []);
      assert.equal(readFileSync(path.join(work, 'nomad', 'alloc', alloc.ID, 'app', 'local', 'hello.txt'), 'utf8'), 'artifact body');
    });

    for (const [key, text] of [
      ['volumez', 'An argument named "volumez" is not expected here'],
      ['volumes', 'does not implement config key "volumes"'],
    ] as const) {
      it(`fails the task with a Driver Failure for Config key "${key}"`, async () => {
        const id = `bad-${key}`;
        await call(nomad.url, 'PUT', '/v1/jobs', { Job: job(id, { Config: { image: APP_IMAGE, command: 'python3', [key]: ['/x:/y'] } }) });
        const alloc = await allocOf(nomad.url, id, 'failed');
        const failure = alloc.TaskStates.app.Events.find((e: any) => e.Type === 'Driver Failure');
        assert.ok(failure.DisplayMessage.includes(text), failure.DisplayMessage);
      });
    }

    it('an image that cannot be pulled is a Driver Failure "Failed to pull" and fails the task per its restart policy', async () => {
      await call(nomad.url, 'PUT', '/v1/jobs', { Job: job('no-image', { Config: { image: 'svc/missing:1', command: 'python3' } }) });
      const alloc = await allocOf(nomad.url, 'no-image', 'failed');
      const types = alloc.TaskStates.app.Events.map((e: any) => e.Type);
      assert.ok(types.includes('Not Restarting'), types.join(','));
      const failure = alloc.TaskStates.app.Events.find((e: any) => e.Type === 'Driver Failure');
      assert.match(failure.DisplayMessage, /^Failed to pull `svc\/missing:1`: manifest unknown/);
    });
  });

  describe('registry puller', () => {
    let registry: Server;
    let host: string;
    const corrupt = new Set<string>();

    before(async () => {
      registry = specRegistry(appLayout, 'svc/app', corrupt);
      host = (await listen(registry)).slice('http://'.length);
    });

    after(() => {
      registry?.close();
    });

    it('pulls by tag through an index, answering the Bearer challenge, and verifies every digest', async () => {
      const source = new RegistryImageSource(path.join(work, 'pulled-ok'));
      const image = await source.pull(`${host}/svc/app:latest`, { username: 'puller', password: 'secret' });
      assert.equal(image.layers.length, 2);
      for (const layer of image.layers)
        assert.equal(`sha256:${createHash('sha256').update(readFileSync(layer)).digest('hex')}`, `sha256:${path.basename(layer)}`);
      assert.ok(image.config.config?.Env?.includes('APP_GREETING=from-image'));
      await assert.rejects(new RegistryImageSource(path.join(work, 'pulled-anon')).pull(`${host}/svc/app:latest`), /unauthorized/);
      await assert.rejects(source.pull(`${host}/svc/app:nope`, { username: 'puller', password: 'secret' }), /manifest unknown/);
    });

    it('refuses a blob whose bytes do not match its digest', async () => {
      const { layers } = readLayout(appLayout);
      corrupt.add(layers[1]!.digest);
      try {
        const source = new RegistryImageSource(path.join(work, 'pulled-corrupt'));
        await assert.rejects(source.pull(`${host}/svc/app:latest`, { username: 'puller', password: 'secret' }), /digest mismatch/);
        assert.equal(existsSync(path.join(work, 'pulled-corrupt', 'sha256', layers[1]!.digest.slice(7))), false);
      } finally {
        corrupt.clear();
      }
    });

    it('is the default source: a job with a registry image and auth runs', async () => {
      const nomad = await startNomadStandin({ dataDir: path.join(work, 'nomad-registry') });
      try {
        await call(nomad.url, 'PUT', '/v1/jobs', {
          Job: job('from-registry', {
            Config: {
              image: `${host}/svc/app:latest`,
              command: 'python3',
              args: ['/opt/app/serve.py', '${NOMAD_PORT_http}'],
              auth: { username: 'puller', password: 'secret' },
            },
          }),
        });
        const alloc = await allocOf(nomad.url, 'from-registry', 'running');
        const port = alloc.AllocatedResources.Shared.Ports[0].Value;
        const env = await until(
          'the container answering',
          async () => (await fetch(`http://127.0.0.1:${port}/env`)).json() as Promise<any>,
        );
        assert.equal(env.NOMAD_TASK_DIR, '/local');
        assert.equal(existsSync(path.join(work, 'nomad-registry', 'docker', 'blobs', 'sha256')), true);
      } finally {
        await nomad.close();
      }
    });
  });
});

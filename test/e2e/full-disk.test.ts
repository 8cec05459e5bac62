/**
 * svc on a data dir whose disk fills up while it serves: a tmpfs of 24 MiB this test mounts (it
 * needs root, as CI has; elsewhere it says why it skips), holding the whole data dir. The logs'
 * older segments go first; then every write that cannot be made is refused with `disk_full`
 * (state, bundle uploads, volume files) while the deployed workload keeps answering; once space
 * is freed, writes work again in the same process.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { upload } from './api-lifecycle-helpers.js';
import { deployRequest } from './lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';
import { mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

/** Fills the disk holding `dir` with a file of zeros until it refuses more. */
function fill(file: string): void {
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${file}`, 'bs=64k'], { stdio: 'ignore' });
  } catch {
    // dd stops with "No space left on device": the disk is full.
  }
}

describe('svc on a disk that fills up (a tmpfs of 24 MiB)', function () {
  this.timeout(120_000);
  let disk: Tmpfs | null = null;
  let mountPoint: string;
  let platform: Platform | undefined;
  let call: Call;
  let owner: string;
  let url: string;
  /** The first token the full disk refused: `filling-<n>`. */
  let refusedAt = 0;

  before(async function () {
    disk = mountTmpfs('24m');
    if (disk === null) return this.skip();
    mountPoint = disk.dir;
    platform = await startPlatform({ config: testConfig({ dataDir: path.join(mountPoint, 'data') }) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'echo.py') });
    const deployment = await platform.deployments.deploy(deployRequest(manifest));
    url = deployment.workloads.find((w) => w.name === 'public')!.url!;
    assert.equal((await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'kept' } })).status, 201);
  });
  after(async () => {
    await platform?.close();
    disk?.unmount();
  });

  it("lets the logs' older segments go before it refuses a state write", async () => {
    const logs = path.join(mountPoint, 'data', 'logs', 'default', 'echo');
    mkdirSync(logs, { recursive: true });
    const older = path.join(logs, 'public.1.jsonl');
    writeFileSync(older, `${JSON.stringify({ time: new Date().toISOString(), stream: 'stdout', text: 'x'.repeat(200) })}\n`.repeat(5000));
    fill(path.join(mountPoint, 'filler-1'));
    // Small records fit in the free end of the log's last page for a while: enough of them to need more.
    for (let i = 0; i < 40; i++) {
      const token = await call('POST', '/api/v1/tokens', { token: owner, json: { name: `made-on-a-full-disk-${i}` } });
      assert.equal(token.status, 201, token.text);
    }
    assert.equal(existsSync(older), false, 'the older segment went');
  });

  it('refuses every write it cannot make with disk_full, naming the file and the space left, and keeps serving', async () => {
    fill(path.join(mountPoint, 'filler-2'));
    // Until the free end of the log's last page is used up: the write after it is refused.
    let token = await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'filling-0' } });
    for (refusedAt = 0; token.status === 201 && refusedAt < 200; ) {
      refusedAt++;
      token = await call('POST', '/api/v1/tokens', { token: owner, json: { name: `filling-${refusedAt}` } });
    }
    assert.equal(token.status, 507, token.text);
    assert.equal(token.json.error.code, 'disk_full');
    assert.match(
      token.json.error.message,
      new RegExp(`^the disk holding ${mountPoint}/data/state/state\\.log is full \\([\\d.]+ (B|KiB) free\\)`),
    );

    const bundle = await bundleOfFolder(path.join(packageRoot, 'test', 'fixtures', 'secrets'));
    const uploaded = await upload(platform!.url, owner, bundle.bytes, bundle.sha256);
    assert.equal(uploaded.status, 507, JSON.stringify(uploaded.json ?? uploaded));
    const put = await fetch(`${platform!.url}/api/v1/volumes/kept/files?path=weights.bin`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/octet-stream' },
      body: Buffer.alloc(1024 * 1024, 7),
    });
    assert.equal(put.status, 507, await put.text());

    const served = await fetch(url);
    assert.equal(served.status, 200, 'the deployed workload keeps answering');
  });

  it('writes again once space is freed, without a restart', async () => {
    rmSync(path.join(mountPoint, 'filler-1'));
    rmSync(path.join(mountPoint, 'filler-2'));
    const token = await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'after' } });
    assert.equal(token.status, 201, token.text);
    const names = (await call('GET', '/api/v1/tokens', { token: owner })).json.tokens.map((t: { name: string }) => t.name);
    assert.ok(names.includes('made-on-a-full-disk-39') && names.includes('after'), names.join(', '));
    assert.ok(refusedAt === 0 || names.includes(`filling-${refusedAt - 1}`), 'the tokens made before the refusal are kept');
    assert.ok(!names.includes(`filling-${refusedAt}`), 'the refused token is nowhere');
    const put = await fetch(`${platform!.url}/api/v1/volumes/kept/files?path=weights.bin`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/octet-stream' },
      body: Buffer.alloc(1024 * 1024, 7),
    });
    assert.equal(put.status, 201, await put.text());
  });
});

describe('svc on a data dir it cannot write (a read-only tmpfs)', function () {
  this.timeout(30_000);
  let disk: Tmpfs | null = null;

  before(function () {
    disk = mountTmpfs('1m');
    if (disk === null) return this.skip();
    mkdirSync(path.join(disk.dir, 'data'));
    disk.readOnly();
  });
  after(() => disk?.unmount());

  it('refuses to start, saying the file system is read-only and what to do, before it makes anything', async () => {
    const dataDir = path.join(disk!.dir, 'data');
    await assert.rejects(startPlatform({ config: testConfig({ dataDir }) }), (error: Error & { code?: string; hint?: string }) => {
      assert.equal(error.code, 'config_invalid');
      assert.equal(error.message, `svc cannot write its data dir ${dataDir}: it is on a read-only file system.`);
      assert.match(error.hint!, /Mount it read-write, or give svc another \(--data-dir or SVC_DATA_DIR\)/);
      return true;
    });
  });
});

/**
 * A volume's files behave the same wherever they are kept: each case runs against the folder storage
 * (the embedded default) and against a real keeper (`python -m svc.runtime volume-keeper`, started
 * from its compiled Nomad job's command, args and env, with Nomad's placeholders filled in, over a
 * temporary folder standing for the mounted CSI volume) through svc's keeper client. Same entries,
 * same bytes, same errors in the same words.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createVenvBuilder } from '../../../../core/infra/images/venv-builder.js';
import { CsiStorage } from '../../../../core/infra/scheduler/nomad/csi-storage.js';
import type { CsiVolumeOptions } from '../../../../core/infra/scheduler/nomad/csi-volumes.js';
import type { VolumeKeepers } from '../../../../core/infra/scheduler/nomad/volume-keepers.js';
import { FolderStorage } from '../../../../core/infra/volumes/folder-storage.js';
import { type KeeperAddress, KeeperFiles } from '../../../../core/infra/volumes/keeper-client.js';
import type { EntriesListing, EntriesPage, OpenedFile, PickBytes, VolumeEntry, VolumePlace } from '../../../../core/infra/volumes/types.js';
import { SvcError } from '../../../../core/model/errors.js';
import { sdkPythonPath } from '../../../../core/model/paths.js';
import { defaultClusterSettings } from '../../../../jobs/context.js';
import { compileKeeperJob } from '../../../../jobs/volume-keeper.js';
import { tempDir, testCacheDir } from '../../../helpers/config.js';
import { until } from '../../../helpers/until.js';

/** What both storages are asked in these cases. */
interface Files {
  list(at: VolumePlace, recursive: boolean, page: EntriesPage): Promise<EntriesListing>;
  write(at: VolumePlace, body: Readable, room: number, full: (written: number) => SvcError): Promise<VolumeEntry>;
  open(at: VolumePlace, pick?: PickBytes): Promise<OpenedFile>;
  remove(at: VolumePlace, recursive: boolean): Promise<void>;
  used(): Promise<number>;
}

const WORKSPACE = 'acme';
const VOLUME = 'models';
const at = (p: string): VolumePlace => ({ workspace: WORKSPACE, volume: VOLUME, parts: p === '' ? [] : p.split('/') });
/** A page as large as a page may be: all of these small listings. */
const ALL: EntriesPage = { after: null, limit: 10_000 };
const full = (written: number) => new SvcError('volume_full', `full at ${written}`, { details: { addingBytes: written } });
const chunks = (data: Buffer, size = 64 * 1024) =>
  Readable.from(
    (function* () {
      for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
    })(),
  );
const text = (value: string) => chunks(Buffer.from(value));

async function read(file: OpenedFile): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of file.stream as AsyncIterable<Buffer>) parts.push(part);
  return Buffer.concat(parts);
}

async function refusal(attempt: Promise<unknown>): Promise<{ code: string; message: string; hint: string | undefined }> {
  try {
    await attempt;
  } catch (error) {
    assert.ok(error instanceof SvcError, String(error));
    return { code: error.code, message: error.message, hint: error.hint };
  }
  assert.fail('expected a refusal');
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The keeper as its Nomad job starts it: the task's command, args and env, with `${NOMAD_*}` filled in. */
async function startKeeper(root: string, token: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const python = process.env.SVC_PYTHON ?? 'python3';
  const version = execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();
  const image = await createVenvBuilder({ cacheDir: testCacheDir, python }).build(
    { id: 'svc-volume-keeper', pythonVersion: version, pythonPackages: [], requirementsFiles: [], env: {} },
    () => {},
  );
  const job = compileKeeperJob({
    workspace: WORKSPACE,
    volume: VOLUME,
    cluster: { ...defaultClusterSettings, driver: 'exec', python: image.pythonPath, runtimePath: sdkPythonPath, volumes: 'csi' },
    image: null,
  });
  const group = job.Job.TaskGroups[0]!;
  const task = group.Tasks[0]!;
  assert.equal(group.Volumes!.data!.Type, 'csi');
  const secrets = tempDir('svc-keeper-secrets-');
  writeFileSync(path.join(secrets, 'keeper-token'), `${token}\n`, { mode: 0o400 });
  const port = await freePort();
  const values: Record<string, string> = { NOMAD_PORT_keeper: String(port), NOMAD_IP_keeper: '127.0.0.1', NOMAD_SECRETS_DIR: secrets };
  const fill = (value: string) => value.replace(/\$\{(NOMAD_[A-Za-z_]+)\}/g, (_, name: string) => values[name]!);
  const mount = task.VolumeMounts![0]!.Destination;
  const config = task.Config as { command: string; args: string[] };
  // The mount's path in the task is the volume's root: here, the temporary folder.
  const args = config.args.map((arg) => (arg === mount ? root : fill(arg)));
  const env = Object.fromEntries(Object.entries(task.Env ?? {}).map(([name, value]) => [name, fill(value)]));
  const child = spawn(config.command, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await until(
    'the keeper answers',
    async () => {
      if (child.exitCode !== null) assert.fail(`the keeper exited (${child.exitCode}):\n${output}`);
      return (await fetch(`${url}/health`).catch(() => null))?.ok === true;
    },
    { timeoutMs: 60_000, intervalMs: 50 },
  );
  return { child, url, output: () => output };
}

const kinds = ['folder', 'keeper'] as const;

describe('volume files: the folder storage and a real keeper answer alike', function () {
  this.timeout(120_000);
  const roots: Record<(typeof kinds)[number], string> = { folder: '', keeper: '' };
  const files = {} as Record<(typeof kinds)[number], Files>;
  let keeper: Awaited<ReturnType<typeof startKeeper>>;
  let address: KeeperAddress;
  let finds = 0;

  before(async () => {
    const parent = tempDir('svc-volumes-');
    const folder = new FolderStorage(parent);
    await folder.create(WORKSPACE, VOLUME);
    roots.folder = folder.mountSource(WORKSPACE, VOLUME);
    files.folder = { ...bind(folder), used: async () => (await folder.usedBytes(WORKSPACE, [VOLUME])).get(VOLUME)! };

    roots.keeper = tempDir('svc-csi-volume-');
    const token = randomBytes(16).toString('hex');
    keeper = await startKeeper(roots.keeper, token);
    address = { url: keeper.url, token };
    const client = new KeeperFiles({
      find: async () => {
        finds += 1;
        return address;
      },
      forget: () => {},
    });
    files.keeper = {
      ...bind({
        list: client.list.bind(client),
        // The keeper also says what the file replaced (the server's size counts on from it): the entry is what both answer.
        write: async (...args) => (await client.write(...args)).entry,
        open: client.open.bind(client),
        remove: client.remove.bind(client),
      }),
      used: () => client.usedBytes(WORKSPACE, VOLUME),
    };
  });

  after(() => {
    keeper?.child.kill('SIGTERM');
  });

  /** The same case on both storages; their results must be equal. */
  async function both<T>(run: (files: Files, root: string) => Promise<T>): Promise<T> {
    const folder = await run(files.folder, roots.folder);
    const kept = await run(files.keeper, roots.keeper);
    assert.deepEqual(withoutTimes(kept), withoutTimes(folder), 'the keeper answers as the folder storage does');
    return kept;
  }

  it('writes a streamed file (folders made as needed) and reads it back whole and by range', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const entry = await both((f) => f.write(at('weights/v1/big.bin'), chunks(data), 1 << 30, full));
    assert.deepEqual(withoutTimes(entry), { path: 'weights/v1/big.bin', type: 'file', size: data.length });
    const whole = await both(async (f) => {
      const file = await f.open(at('weights/v1/big.bin'));
      return {
        size: file.size,
        start: file.start,
        end: file.end,
        sha256: createHash('sha256')
          .update(await read(file))
          .digest('hex'),
      };
    });
    assert.equal(whole.sha256, createHash('sha256').update(data).digest('hex'));
    const part = await both(async (f) => {
      const file = await f.open(at('weights/v1/big.bin'), () => ({ start: 100, end: 1123 }));
      return (await read(file)).toString('hex');
    });
    assert.equal(part, data.subarray(100, 1124).toString('hex'));
    const empty = await both(async (f) => {
      await f.write(at('empty.txt'), text(''), 10, full);
      const file = await f.open(at('empty.txt'));
      return { size: file.size, end: file.end, bytes: (await read(file)).length };
    });
    assert.deepEqual(empty, { size: 0, end: -1, bytes: 0 });
  });

  it('lists a folder, everything below it, and a file, leaving uploads in progress out; a link is a link', async () => {
    for (const root of Object.values(roots)) {
      writeFileSync(path.join(root, 'weights', '.svc-upload-0123456789abcdef'), 'half');
      symlinkSync('v1/big.bin', path.join(root, 'weights', 'latest'));
    }
    const listed = (await both((f) => f.list(at('weights'), true, ALL))).entries;
    assert.deepEqual(
      listed.map((e) => [e.path, e.type]),
      [
        ['weights/latest', 'link'],
        ['weights/v1', 'dir'],
        ['weights/v1/big.bin', 'file'],
      ],
    );
    await both((f) => f.list(at(''), false, ALL));
    await both((f) => f.list(at('weights/v1/big.bin'), false, ALL));
  });

  it('pages a listing: each page goes on after the one before, also past an entry removed meanwhile', async () => {
    for (const root of Object.values(roots)) {
      for (const file of ['pages/a/x', 'pages/a/y/deep', 'pages/b', 'pages/c/z', 'pages/d']) {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), file);
      }
    }
    const whole = (await both((f) => f.list(at('pages'), true, ALL))).entries.map((e) => e.path);
    assert.deepEqual(whole, ['pages/a', 'pages/a/x', 'pages/a/y', 'pages/a/y/deep', 'pages/b', 'pages/c', 'pages/c/z', 'pages/d']);
    // Three at a time, each page from the `next` of the one before (the keeper's too: they must agree).
    const pages: { paths: string[]; next: string | null }[] = [];
    for (let after: string | null = null; pages.length === 0 || after !== null; ) {
      const cursor: string[] | null = after === null ? null : after.split('/');
      const page: EntriesListing = await both((f) => f.list(at('pages'), true, { after: cursor, limit: 3 }));
      pages.push({ paths: page.entries.map((e) => e.path), next: page.next });
      after = page.next;
    }
    assert.deepEqual(pages, [
      { paths: ['pages/a', 'pages/a/x', 'pages/a/y'], next: 'pages/a/y' },
      { paths: ['pages/a/y/deep', 'pages/b', 'pages/c'], next: 'pages/c' },
      { paths: ['pages/c/z', 'pages/d'], next: null },
    ]);
    // A page that ends on the last entry says so: no next.
    assert.equal((await both((f) => f.list(at('pages'), true, { after: ['pages', 'c'], limit: 2 }))).next, null);
    // The entry a page ended on is gone (a folder, with what it held): the next page starts after where it was.
    for (const root of Object.values(roots)) rmSync(path.join(root, 'pages', 'a'), { recursive: true });
    const after = await both((f) => f.list(at('pages'), true, { after: ['pages', 'a', 'y'], limit: 10 }));
    assert.deepEqual(
      after.entries.map((e) => e.path),
      ['pages/b', 'pages/c', 'pages/c/z', 'pages/d'],
    );
    // Without recursive, a folder's entry is the cursor and nothing below it comes.
    const top = await both((f) => f.list(at('pages'), false, { after: ['pages', 'b'], limit: 1 }));
    assert.deepEqual(top, { entries: [top.entries[0]], next: 'pages/c' });
    assert.equal(top.entries[0]!.path, 'pages/c');
    // A file's listing is its entry, and nothing after it.
    assert.equal((await both((f) => f.list(at('pages/d'), false, { after: null, limit: 1 }))).entries.length, 1);
    assert.deepEqual(await both((f) => f.list(at('pages/d'), false, { after: ['pages', 'd', 'x'], limit: 1 })), {
      entries: [],
      next: null,
    });
    for (const root of Object.values(roots)) rmSync(path.join(root, 'pages'), { recursive: true });
  });

  it('refuses what the folder storage refuses, in the same words', async () => {
    for (const root of Object.values(roots)) symlinkSync('/etc', path.join(root, 'escape'));
    const cases: [string, (f: Files) => Promise<unknown>][] = [
      ['a missing file', (f) => f.open(at('weights/none.bin'))],
      ['a missing folder', (f) => f.list(at('nothing/here'), false, ALL)],
      ['a folder read as a file', (f) => f.open(at('weights'))],
      ['a link out of the volume, listed', (f) => f.list(at('escape'), false, ALL)],
      ['a link out of the volume, read', (f) => f.open(at('escape/passwd'))],
      ['a link out of the volume, written into', (f) => f.write(at('escape/planted'), text('x'), 100, full)],
      ['a link out of the volume, removed below', (f) => f.remove(at('escape/passwd'), false)],
      ['a file where a folder would be', (f) => f.write(at('empty.txt/below'), text('x'), 100, full)],
      ['a folder where the file would be', (f) => f.write(at('weights/v1'), text('x'), 100, full)],
      ['the root written', (f) => f.write(at(''), text('x'), 100, full)],
      ['the root removed', (f) => f.remove(at(''), true)],
      ['a folder removed without recursive', (f) => f.remove(at('weights'), false)],
      ['a missing file removed', (f) => f.remove(at('weights/none.bin'), false)],
    ];
    for (const [name, attempt] of cases) {
      const folder = await refusal(attempt(files.folder));
      const kept = await refusal(attempt(files.keeper));
      assert.deepEqual(kept, folder, name);
    }
    assert.equal(existsSync('/etc/planted'), false);
  });

  it("stops an upload past its room with the caller's volume_full, keeping nothing", async () => {
    const data = randomBytes(2 * 1024 * 1024);
    for (const kind of kinds) {
      const refused = await refusal(files[kind].write(at('big/over.bin'), chunks(data), 1024 * 1024, full));
      assert.equal(refused.code, 'volume_full', kind);
      assert.ok(Number(/full at (\d+)/.exec(refused.message)![1]) > 1024 * 1024, kind);
      const left = existsSync(path.join(roots[kind], 'big')) ? readdirSync(path.join(roots[kind], 'big')) : [];
      assert.deepEqual(left, [], `${kind}: no temporary file is left`);
    }
  });

  it('an upload the client breaks off is client_closed, and nothing of it is kept', async () => {
    for (const kind of kinds) {
      const broken = new Readable({ read() {} });
      broken.push(randomBytes(1024 * 1024));
      setTimeout(() => broken.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })), 100);
      const refused = await refusal(files[kind].write(at('cut/part.bin'), broken, 1 << 30, full));
      assert.equal(refused.code, 'client_closed', kind);
      await until(
        `${kind}: no temporary file is left`,
        () => !existsSync(path.join(roots[kind], 'cut')) || readdirSync(path.join(roots[kind], 'cut')).length === 0,
        {
          timeoutMs: 5000,
          intervalMs: 20,
        },
      );
    }
  });

  it("the CSI storage's size counts a file an upload replaced out, as a walk of the volume does", async () => {
    // Its keeper is the real one here; Nomad is not asked for anything by uploads and sizes.
    const keepers = { find: async () => address, forget: () => {} } as unknown as VolumeKeepers;
    const csi = new CsiStorage({} as ConstructorParameters<typeof CsiStorage>[0], keepers, {
      plugin: 'unused',
      capacityBytes: 1 << 30,
    } satisfies CsiVolumeOptions);
    const before = (await csi.usedBytes(WORKSPACE, [VOLUME], 0)).get(VOLUME)!;
    await csi.write(at('sizes/model.bin'), chunks(randomBytes(300_000)), 1 << 30, full);
    await csi.write(at('sizes/model.bin'), chunks(randomBytes(1_000)), 1 << 30, full); // replaces it
    const counted = (await csi.usedBytes(WORKSPACE, [VOLUME])).get(VOLUME)!; // the size kept, with the uploads since
    assert.equal(counted, before + 1_000);
    assert.equal((await csi.usedBytes(WORKSPACE, [VOLUME], 0)).get(VOLUME), counted, 'what a walk says');
    await csi.remove(at('sizes'), true);
  });

  it('removes a link itself, a folder with what it holds, and counts the bytes held', async () => {
    await both((f) => f.remove(at('weights/latest'), false));
    for (const root of Object.values(roots)) assert.ok(existsSync(path.join(root, 'weights', 'v1', 'big.bin')), 'the link target stays');
    const before = await both((f) => f.used());
    assert.ok(before > 3 * 1024 * 1024, String(before));
    await both((f) => f.remove(at('weights'), true));
    for (const root of Object.values(roots)) rmLeftovers(root);
    assert.equal(await both((f) => f.used()), 0);
  });

  it('a keeper that does not answer is looked for again once for a read; a write is not sent twice', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    let calls = 0;
    const client = new KeeperFiles({
      find: async () => (++calls === 1 ? { url: dead, token: address.token } : address),
      forget: () => {},
    });
    assert.deepEqual(
      (await client.list(at(''), false, ALL)).entries.map((e) => e.path),
      (await files.folder.list(at(''), false, ALL)).entries.map((e) => e.path),
    );
    assert.equal(calls, 2);
    calls = 0;
    const refused = await refusal(client.write(at('a.txt'), text('x'), 10, full));
    assert.equal(refused.code, 'upstream_unreachable');
    assert.match(refused.message, /the keeper of the volume models does not answer/);
    assert.equal(calls, 1);
  });

  it('a keeper that refuses the signature is forgotten and found again once for a read; a write gets the refusal, sent once', async () => {
    // The address known now answers with another token: a keeper of another volume moved there.
    let calls = 0;
    let forgotten = 0;
    const client = new KeeperFiles({
      find: async () => (++calls === 1 ? { url: address.url, token: 'not-this-volumes-token' } : address),
      forget: () => {
        forgotten += 1;
      },
    });
    assert.deepEqual(
      (await client.list(at(''), false, ALL)).entries.map((e) => e.path),
      (await files.folder.list(at(''), false, ALL)).entries.map((e) => e.path),
    );
    assert.deepEqual({ calls, forgotten }, { calls: 2, forgotten: 1 });

    calls = 0;
    forgotten = 0;
    const refused = await refusal(client.write(at('refused.txt'), text('x'), 10, full));
    assert.equal(refused.code, 'upstream_unreachable');
    assert.match(
      refused.message,
      /where the keeper of the volume models was, is not it \(it answered 401 to svc's signed request\); nothing was done/,
    );
    assert.deepEqual({ calls, forgotten }, { calls: 1, forgotten: 1 });
    assert.equal(existsSync(path.join(roots.keeper, 'refused.txt')), false, 'nothing of the refused upload is kept');
  });

  it('the keeper refuses a request without its token', async () => {
    const answer = await fetch(`${address.url}/entries?path=`, { headers: { authorization: 'Bearer wrong' } });
    assert.equal(answer.status, 401);
    assert.ok(finds > 0);
  });
});

function bind(storage: Pick<Files, 'list' | 'write' | 'open' | 'remove'>): Omit<Files, 'used'> {
  return {
    list: storage.list.bind(storage),
    write: storage.write.bind(storage),
    open: storage.open.bind(storage),
    remove: storage.remove.bind(storage),
  };
}

/** Modification times differ between two copies made a moment apart; everything else must not. */
function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== 'modifiedAt')
        .map(([key, v]) => [key, withoutTimes(v)]),
    );
  }
  return value;
}

/** The escape link and the stray upload file the listing case planted. */
function rmLeftovers(root: string): void {
  for (const name of ['escape', 'empty.txt', 'cut', 'big']) execFileSync('rm', ['-rf', path.join(root, name)]);
}

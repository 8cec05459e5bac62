/**
 * Deployment logs with a data dir: the lines of deployed deployments outlive
 * the process (a clean stop or kill -9), within the same bounds on disk as in
 * memory; everything else stays in memory, and file errors never lose lines.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeploymentLogs, type DeploymentLogLine } from '../../../../core/infra/logs/deployment-logs.js';
import { tempDirs } from '../state/temp-dirs.js';

const WRITER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'log-writer.js');
const newDir = tempDirs();
const key = { workspace: 'default', app: 'shop', stage: 'deployed', workload: 'api' };
const unit = 'default/shop/deployed@1/api';
const at = (i: number): DeploymentLogLine => ({
  time: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
  container: 'c1',
  stream: 'stdout',
  text: `line ${i}`,
});
const texts = (lines: DeploymentLogLine[]) => lines.map((l) => l.text);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `line ${from + i}`);
const appDir = (dir: string) => path.join(dir, 'default', 'shop');

async function restarted(dir: string, options: ConstructorParameters<typeof DeploymentLogs>[0] = {}): Promise<DeploymentLogs> {
  const logs = new DeploymentLogs({ ...options, dir });
  await logs.restore();
  return logs;
}

describe('DeploymentLogs with a data dir', () => {
  it('reads the lines of a deployment back after a restart, with their containers, streams and versions', async () => {
    const dir = newDir();
    const first = await restarted(dir);
    first.setVersion(unit, 1);
    first.addBuildLine(key, 'Collecting fastapi', 1);
    first.addUnitLine({ unit, container: 'c-3f2a', stream: 'stderr', text: 'said hello', time: new Date('2025-01-01T12:00:00Z') });
    first.add({ ...key, workload: 'worker' }, at(7));
    const before = first.lines(key);
    await first.close();

    const second = await restarted(dir);
    assert.deepEqual(second.lines(key), before);
    assert.deepEqual(second.lines(key)[1], {
      time: '2025-01-01T12:00:00.000Z',
      container: 'c-3f2a',
      stream: 'stderr',
      text: 'said hello',
      version: 1,
    });
    assert.deepEqual(texts(second.lines({ ...key, workload: 'worker' })), ['line 7']);
    // Lines added after the restart follow the restored ones, on disk too.
    second.add(key, at(8));
    await second.close();
    assert.deepEqual(texts((await restarted(dir)).lines(key)), ['Collecting fastapi', 'said hello', 'line 8']);
  });

  it('keeps two segments within the line bound on disk, and reads back exactly the last lines in order', async () => {
    const dir = newDir();
    const logs = await restarted(dir, { maxLines: 10 });
    for (let i = 0; i < 30; i++) {
      logs.add(key, at(i));
      // close() flushes (and may be called again): segments rotate between appends as well as within one.
      if (i % 7 === 0) await logs.close();
    }
    await logs.close();
    assert.deepEqual(readdirSync(appDir(dir)).sort(), ['api.1.jsonl', 'api.jsonl']);
    for (const file of readdirSync(appDir(dir))) {
      const lines = readFileSync(path.join(appDir(dir), file), 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      assert.ok(lines.length <= 10, `${file} holds ${lines.length} lines`);
    }
    assert.deepEqual(texts((await restarted(dir, { maxLines: 10 })).lines(key)), range(20, 30));
  });

  it('keeps two segments within the byte bound on disk, and reads back the lines memory kept', async () => {
    const dir = newDir();
    const logs = await restarted(dir, { maxBytes: 1000 });
    const line = (i: number) => ({ ...at(i), text: `${i}`.padStart(100, '.') });
    for (let i = 0; i < 30; i++) logs.add(key, line(i));
    await logs.close();
    const sizes = readdirSync(appDir(dir)).map((file) => statSync(path.join(appDir(dir), file)).size);
    assert.equal(sizes.length, 2);
    // 1000 bytes of text a segment, plus the JSON around each line.
    for (const size of sizes) assert.ok(size <= 2000, `a segment of ${size} bytes`);
    const back = (await restarted(dir, { maxBytes: 1000 })).lines(key);
    assert.deepEqual(back, logs.lines(key));
    assert.deepEqual(
      back.map((l) => l.text.replace(/^\.+/, '')),
      range(20, 30).map((t) => t.slice(5)),
    );
  });

  it('skips a torn last line and any line of another shape, loads the rest, and appends after it on a new line', async () => {
    const dir = newDir();
    const logs = await restarted(dir);
    for (let i = 0; i < 3; i++) logs.add(key, at(i));
    await logs.close();
    const file = path.join(appDir(dir), 'api.jsonl');
    const valid = readFileSync(file, 'utf8').split('\n');
    writeFileSync(
      file,
      [valid[0], 'not json', '{"time":1,"container":"c1","stream":"stdout","text":"x"}', '[]', valid[1], valid[2], ''].join('\n'),
    );
    // A crash in the middle of an append.
    appendFileSync(file, JSON.stringify(at(3)).slice(0, 30));

    const again = await restarted(dir);
    assert.deepEqual(texts(again.lines(key)), range(0, 3));
    again.add(key, at(4));
    await again.close();
    assert.deepEqual(texts((await restarted(dir)).lines(key)), [...range(0, 3), 'line 4']);
  });

  it('removes the files of a forgotten deployment, and keeps the others', async () => {
    const dir = newDir();
    const logs = await restarted(dir);
    logs.add(key, at(1));
    logs.add({ ...key, app: 'other' }, at(2));
    await logs.close();
    logs.add(key, at(3));
    logs.forget(key);
    await logs.close();
    assert.equal(existsSync(appDir(dir)), false);
    const again = await restarted(dir);
    assert.deepEqual(again.lines(key), []);
    assert.deepEqual(texts(again.lines({ ...key, app: 'other' })), ['line 2']);
  });

  it('keeps the lines of previews and remote runs in memory only', async () => {
    const dir = newDir();
    const logs = await restarted(dir);
    logs.add({ ...key, stage: 'preview' }, at(1));
    logs.add({ ...key, stage: 'run' }, at(2));
    await logs.close();
    assert.deepEqual(texts(logs.lines({ ...key, stage: 'preview' })), ['line 1']);
    assert.equal(existsSync(path.join(dir, 'default')), false);
    assert.deepEqual((await restarted(dir)).lines({ ...key, stage: 'preview' }), []);
  });

  it('writes buffered lines on close', async () => {
    const dir = newDir();
    const logs = await restarted(dir);
    for (let i = 0; i < 5; i++) logs.add(key, at(i));
    // Nothing is written before the batch is flushed: the flush is asynchronous, never on the caller's time.
    assert.equal(existsSync(path.join(appDir(dir), 'api.jsonl')), false);
    await logs.close();
    assert.equal(readFileSync(path.join(appDir(dir), 'api.jsonl'), 'utf8').split('\n').length, 6);
  });

  it('reports a folder it cannot write once, and keeps the lines in memory', async () => {
    const parent = newDir();
    const dir = path.join(parent, 'logs');
    writeFileSync(dir, 'a file where the folder should be');
    const reported: unknown[] = [];
    const logs = new DeploymentLogs({ dir, report: (error) => reported.push(error) });
    for (let i = 0; i < 3; i++) {
      logs.add(key, at(i));
      await logs.close();
    }
    assert.equal(reported.length, 1);
    assert.ok(reported[0] instanceof Error);
    assert.deepEqual(texts(logs.lines(key)), range(0, 3));
  });

  it('refuses names that are not DNS labels, once, and writes nothing for them', async () => {
    const dir = newDir();
    const reported: unknown[] = [];
    const logs = await restarted(dir, { report: (error) => reported.push(error) });
    const bad = { ...key, app: '../escape' };
    logs.add(bad, at(1));
    logs.add(bad, at(2));
    await logs.close();
    assert.equal(reported.length, 1);
    assert.match(String(reported[0]), /not a valid DNS label/);
    assert.deepEqual(readdirSync(dir), []);
    assert.deepEqual(texts(logs.lines(bad)), ['line 1', 'line 2']);
  });
});

describe('DeploymentLogs after kill -9', () => {
  it('reads back every line flushed before the kill, in order, and appends after them', async () => {
    const dir = newDir();
    const flushed = 500;
    const child = spawn(process.execPath, [WRITER, dir, String(flushed)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('"flushed"')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the writer exited with ${code}`)));
    });
    // Killed while it goes on writing: the last append may be torn.
    child.kill('SIGKILL');
    await exited;

    const logs = await restarted(dir, { maxLines: 1_000_000, maxBytes: 1024 ** 3 });
    const back = texts(logs.lines(key));
    assert.ok(back.length >= flushed, `${back.length} lines came back`);
    assert.deepEqual(back, range(0, back.length));
    logs.add(key, { ...at(0), text: 'after the restart' });
    await logs.close();
    assert.deepEqual(texts((await restarted(dir, { maxLines: 1_000_000, maxBytes: 1024 ** 3 })).lines(key)), [
      ...back,
      'after the restart',
    ]);
  });
});

/**
 * One svc process per state store: a live holder (another process, or this
 * one) refuses the opener; a dead holder's lock is taken over with a warning.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { acquireLock } from '../../../../core/infra/state/lock-file.js';
import { assertCode } from './conformance.js';
import { tempDirs } from './temp-dirs.js';

const WRITER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'helpers', 'state-writer.js');
const RACER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'lock-racer.js');
const newDataDir = tempDirs();

/** Starts a process that opens the store and holds it; resolves once it has it open. */
async function holder(dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [WRITER, dataDir, 'hold'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('"ready"')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('the state store lock', () => {
  it('refuses a second opener while another process holds the store, naming its pid', async () => {
    const dataDir = newDataDir();
    const child = await holder(dataDir);
    try {
      const error = await assertCode(openFileStateStore({ dataDir }), 'state_locked');
      assert.match(error.message, new RegExp(`another svc process \\(pid ${child.pid}\\)`));
      assert.match(error.hint ?? '', /--data-dir/);
    } finally {
      await killed(child);
    }
  });

  it('takes over the lock of a process that died, with a warning', async () => {
    const dataDir = newDataDir();
    const child = await holder(dataDir);
    await killed(child);
    const store = await openFileStateStore({ dataDir });
    assert.deepEqual(store.warnings, [
      `${path.join(store.dir, 'LOCK')}: took over the lock of svc process ${child.pid}, which is no longer running`,
    ]);
    assert.equal(JSON.parse(readFileSync(path.join(store.dir, 'LOCK'), 'utf8')).pid, process.pid);
    await store.close();
  });

  it('refuses a second open in the same process, and opens again after close', async () => {
    const dataDir = newDataDir();
    const store = await openFileStateStore({ dataDir });
    const error = await assertCode(openFileStateStore({ dataDir }), 'state_locked');
    assert.match(error.message, /this process already has the state store/);
    await store.put('k', 'v');
    await store.close();
    assert.equal(existsSync(path.join(store.dir, 'LOCK')), false, 'close removes the lock');
    const again = await openFileStateStore({ dataDir });
    assert.deepEqual(again.warnings, []);
    assert.equal((await again.get('k'))?.value.toString(), 'v');
    await again.close();
  });

  it('takes over a lock whose pid now belongs to another, younger process', async () => {
    const dataDir = newDataDir();
    await (await openFileStateStore({ dataDir })).close();
    // Our own pid, with a start time it never had: the pid was reused.
    writeFileSync(path.join(dataDir, 'state', 'LOCK'), `${JSON.stringify({ pid: process.pid, host: os.hostname(), started: '1' })}\n`);
    const store = await openFileStateStore({ dataDir });
    assert.match(store.warnings.join('\n'), /took over the lock/);
    await store.close();
  });

  it('refuses a lock written on another host, and one it cannot read', async () => {
    const dataDir = newDataDir();
    await (await openFileStateStore({ dataDir })).close();
    const lock = path.join(dataDir, 'state', 'LOCK');
    writeFileSync(lock, `${JSON.stringify({ pid: 1, host: 'elsewhere.example', started: null })}\n`);
    assert.match((await assertCode(openFileStateStore({ dataDir }), 'state_locked')).message, /on host elsewhere\.example/);
    writeFileSync(lock, 'garbage');
    assert.match((await assertCode(openFileStateStore({ dataDir }), 'state_locked')).message, /does not name an svc process/);
  });

  it('never leaves two holders when a slow takeover of a stale lock races a fresh lock and a third opener', async () => {
    const dataDir = newDataDir();
    const stateDir = path.join(dataDir, 'state');
    const syncDir = path.join(dataDir, 'sync');
    mkdirSync(stateDir);
    mkdirSync(syncDir);
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    writeFileSync(path.join(stateDir, 'LOCK'), `${JSON.stringify({ pid: dead.pid, host: os.hostname(), started: null })}\n`);
    const reached = async (name: string): Promise<void> => {
      while (!existsSync(path.join(syncDir, name))) await sleep(5);
    };

    // B reads the stale lock, then stalls before acting on what it read.
    const racer = spawn(process.execPath, [RACER, stateDir, syncDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    racer.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const racerDone = new Promise((resolve) => racer.on('close', resolve));
    await reached('read-1');
    // A takes the stale lock over first.
    const a = await acquireLock(stateDir);
    assert.match(a.warnings.join('\n'), /took over the lock/);
    // B goes on with its takeover and stalls again; meanwhile C (here, another opener in this process) tries.
    writeFileSync(path.join(syncDir, 'go1'), '');
    await reached('read-2');
    const c = await acquireLock(stateDir).then(
      (taken) => taken.lock,
      (error: unknown) => error as { code?: string },
    );
    writeFileSync(path.join(syncDir, 'go2'), '');
    await racerDone;
    try {
      assert.equal((c as { code?: string }).code, 'state_locked', 'a third opener must not get a lock while A holds one');
      assert.deepEqual(JSON.parse(output), { acquired: false, code: 'state_locked' });
      assert.equal(JSON.parse(readFileSync(path.join(stateDir, 'LOCK'), 'utf8')).pid, process.pid, 'A still holds the lock');
    } finally {
      if ('release' in (c as object)) await (c as { release(): Promise<void> }).release();
      await a.lock.release();
    }
  });
});

import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import { socketBase } from '../../core/infra/scheduler/local/socket-dir.js';
import { tempDir, testCacheDir } from '../helpers/config.js';
import { pidsMatching, waitNoneMatching } from '../helpers/processes.js';

const run = promisify(execFile);
const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const env = { ...process.env, SVC_CACHE_DIR: testCacheDir, NO_COLOR: '1' };

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  stdout: string;
  stderr: string;
}

/** Starts `svc server` as an operator would and waits until it printed that it listens. */
async function startServer(dataDir: string): Promise<Started> {
  const child = spawn(process.execPath, [cli, 'server', '--port', '0', '--data-dir', dataDir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  const url = await new Promise<string>((resolve, reject) => {
    // Ready once stdout holds the whole block (it ends with a blank line).
    child.stdout!.on('data', (chunk: Buffer) => {
      output.stdout += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(output.stdout)?.[1];
      if (found && output.stdout.endsWith('\n\n')) resolve(found);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`svc server exited with ${code} before listening:\n${output.stderr}`)));
  });
  return Object.assign(output, { child, url });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

describe('svc server (command line)', function () {
  this.timeout(60_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`serves the API with the owner token it prints, and exits 0 on ${signal} leaving no process`, async () => {
      const dataDir = tempDir('svc-server-');
      const server = await startServer(dataDir);
      try {
        const tokenFile = path.join(dataDir, 'owner-token');
        assert.match(server.stdout, new RegExp(`owner token: +${tokenFile}`));
        const whoami = await fetch(`${server.url}/api/v1/whoami`, {
          headers: { Authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` },
        });
        assert.equal(whoami.status, 200);
        assert.deepEqual(
          { ...((await whoami.json()) as object), subject: undefined, tokenId: undefined },
          { workspace: 'default', role: 'owner', subject: undefined, tokenId: undefined },
        );
        const link = /sign in: +(\S+)/.exec(server.stdout)?.[1];
        assert.ok(link?.startsWith(`${server.url}/login#`), server.stdout);
        assert.match(server.stdout, /shown once: this link works once and expires in 15 minutes/);
      } finally {
        server.child.kill(signal);
      }
      assert.equal(await exited(server.child), 0);
      assert.match(server.stderr, /stopped/);
      assert.deepEqual(await waitNoneMatching(dataDir, 5_000), [], 'nothing runs on the data dir');
      assert.deepEqual(pidsMatching(`${socketBase()}/${server.child.pid}-`), [], 'no container of the server');
    });
  }

  it('prints no sign-in link on later starts, and the owner token stays the same', async () => {
    const dataDir = tempDir('svc-server-');
    const first = await startServer(dataDir);
    first.child.kill('SIGTERM');
    assert.equal(await exited(first.child), 0);
    const token = readFileSync(path.join(dataDir, 'owner-token'), 'utf8');
    const second = await startServer(dataDir);
    try {
      assert.doesNotMatch(second.stdout, /sign in:/);
      assert.equal(readFileSync(path.join(dataDir, 'owner-token'), 'utf8'), token);
      const whoami = await fetch(`${second.url}/api/v1/whoami`, { headers: { Authorization: `Bearer ${token.trim()}` } });
      assert.equal(whoami.status, 200);
    } finally {
      second.child.kill('SIGTERM');
      await exited(second.child);
    }
  });

  it('stops a second server on the same data dir with the state lock error', async () => {
    const dataDir = tempDir('svc-server-');
    const first = await startServer(dataDir);
    try {
      const result = await run(process.execPath, [cli, 'server', '--port', '0', '--data-dir', dataDir], { env }).then(
        () => assert.fail('the second server should fail'),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(`another svc process \\(pid ${first.child.pid}\\) is using the state store`));
      assert.doesNotMatch(result.stdout, /listening/);
      const stillThere = await fetch(`${first.url}/_svc/health`);
      assert.equal(stillThere.status, 200, 'the first server keeps serving');
    } finally {
      first.child.kill('SIGTERM');
      await exited(first.child);
    }
  });

  it('documents its options in --help', async () => {
    const { stdout } = await run(process.execPath, [cli, 'server', '--help']);
    for (const option of ['--port', '--host', '--data-dir', '--base-domain', '--config']) assert.match(stdout, new RegExp(option));
  });
});

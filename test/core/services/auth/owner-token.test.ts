import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureOwnerToken } from '../../../../core/services/auth/owner-token.js';
import { generateToken, looksLikeToken } from '../../../../core/services/auth/tokens.js';
import type { SvcError } from '../../../../core/model/errors.js';

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

describe('ensureOwnerToken()', () => {
  let root: string;
  let dataDir: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'svc-owner-'));
    dataDir = path.join(root, 'data', 'svc');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('creates the data dir (0700) and the token file (0600)', async () => {
    const owner = await ensureOwnerToken(dataDir);
    assert.equal(owner.created, true);
    assert.equal(owner.path, path.join(dataDir, 'owner-token'));
    assert.ok(looksLikeToken(owner.secret));
    assert.deepEqual(owner.warnings, []);
    assert.equal((await readFile(owner.path, 'utf8')).trim(), owner.secret);
    assert.equal(await modeOf(owner.path), 0o600);
    assert.equal(await modeOf(dataDir), 0o700);
    assert.deepEqual(await readdir(dataDir), ['owner-token']); // no temp file left behind
  });

  it('reuses the existing token', async () => {
    const first = await ensureOwnerToken(dataDir);
    const second = await ensureOwnerToken(dataDir);
    assert.equal(second.created, false);
    assert.equal(second.secret, first.secret);
  });

  it('tightens a file readable by others to 0600 and says so', async () => {
    const first = await ensureOwnerToken(dataDir);
    await chmod(first.path, 0o644);
    const again = await ensureOwnerToken(dataDir);
    assert.equal(again.secret, first.secret);
    assert.equal(await modeOf(first.path), 0o600);
    assert.equal(again.warnings.length, 1);
    assert.match(again.warnings[0] ?? '', /mode 0644.*tightened it to 0600/);
  });

  it('refuses a file that holds no valid token and leaves it alone', async () => {
    await ensureOwnerToken(dataDir);
    const file = path.join(dataDir, 'owner-token');
    await writeFile(file, 'garbage\n');
    await assert.rejects(ensureOwnerToken(dataDir), (error: SvcError) => {
      assert.equal(error.code, 'config_invalid');
      assert.match(error.message, /does not hold a valid svc token/);
      assert.match(error.hint ?? '', /Delete .*owner-token/);
      return true;
    });
    assert.equal(await readFile(file, 'utf8'), 'garbage\n');
  });

  it('accepts a token written by hand without a trailing newline', async () => {
    const { secret } = generateToken();
    await ensureOwnerToken(dataDir);
    await writeFile(path.join(dataDir, 'owner-token'), secret, { mode: 0o600 });
    assert.equal((await ensureOwnerToken(dataDir)).secret, secret);
  });

  it('gives concurrent callers the same token, created once', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => ensureOwnerToken(dataDir)));
    assert.equal(new Set(results.map((r) => r.secret)).size, 1);
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.deepEqual(await readdir(dataDir), ['owner-token']);
  });
});

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  configDir,
  credentialsPath,
  deleteCredentials,
  localServer,
  readCredentials,
  resolveCredentials,
  resolveServer,
  writeCredentials,
} from '../../cli/credentials.js';
import { generateToken } from '../../core/services/auth/tokens.js';
import { SvcError } from '../../core/model/errors.js';
import { tempDir } from '../helpers/config.js';

/** An environment with its own config and data dirs, nothing else. */
function envWith(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { SVC_CONFIG_DIR: path.join(tempDir('svc-config-'), 'cfg'), SVC_DATA_DIR: tempDir('svc-data-'), ...extra };
}

function ownerToken(env: Record<string, string | undefined>): string {
  const { secret } = generateToken();
  writeFileSync(path.join(env.SVC_DATA_DIR!, 'owner-token'), `${secret}\n`, { mode: 0o600 });
  return secret;
}

async function rejection(promise: Promise<unknown>): Promise<SvcError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SvcError, String(error));
    return error;
  }
  assert.fail('expected an SvcError');
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('cli/credentials', () => {
  describe('where it looks', () => {
    it('uses $SVC_CONFIG_DIR, else ~/.svc, for credentials.json', () => {
      assert.equal(credentialsPath({ SVC_CONFIG_DIR: '/etc/svc-test' }), '/etc/svc-test/credentials.json');
      assert.equal(configDir({}), path.join(os.homedir(), '.svc'));
    });

    it('falls back to http://127.0.0.1:7420, or $SVC_PORT, and refuses a port that is not one', () => {
      assert.equal(localServer({}), 'http://127.0.0.1:7420');
      assert.equal(localServer({ SVC_PORT: '8080' }), 'http://127.0.0.1:8080');
      assert.throws(
        () => localServer({ SVC_PORT: 'eighty' }),
        (error: SvcError) => error.code === 'config_invalid' && /SVC_PORT/.test(error.message),
      );
    });
  });

  describe('resolveCredentials()', () => {
    it('takes SVC_SERVER and SVC_TOKEN first, each on its own', async () => {
      const env = envWith({ SVC_SERVER: 'https://svc.example.com/', SVC_TOKEN: 'svc_fromenv' });
      await writeCredentials({ server: 'http://file.example:7420', token: 'svc_fromfile', workspace: 'acme' }, env);
      ownerToken(env);
      const both = await resolveCredentials(env);
      assert.deepEqual(
        { server: both.server, token: both.token, sources: [both.sources.server.kind, both.sources.token.kind] },
        { server: 'https://svc.example.com', token: 'svc_fromenv', sources: ['env', 'env'] },
      );

      const tokenOnly = await resolveCredentials({ ...env, SVC_SERVER: undefined });
      assert.deepEqual(
        [tokenOnly.server, tokenOnly.token, tokenOnly.sources.server.kind],
        ['http://file.example:7420', 'svc_fromenv', 'file'],
      );

      // SVC_SERVER naming the file's server: the file's token goes with it.
      const serverOnly = await resolveCredentials({ ...env, SVC_SERVER: 'http://file.example:7420/', SVC_TOKEN: '' });
      assert.deepEqual(
        [serverOnly.server, serverOnly.token, serverOnly.workspace, serverOnly.sources.token.description],
        ['http://file.example:7420', 'svc_fromfile', 'acme', credentialsPath(env)],
      );
    });

    it('never sends a saved token to another server than its own', async () => {
      const env = envWith({ SVC_SERVER: 'https://elsewhere.example.com' });
      await writeCredentials({ server: 'http://file.example:7420', token: 'svc_fromfile', workspace: 'acme' }, env);
      ownerToken(env);
      const error = await rejection(resolveCredentials(env));
      assert.equal(error.code, 'not_signed_in');
      assert.match(error.message, /no token for https:\/\/elsewhere\.example\.com.*is for http:\/\/file\.example:7420/);
      assert.match(error.hint ?? '', /svc login --server https:\/\/elsewhere\.example\.com/);
      // This machine's owner token goes only to this machine's server.
      const local = await resolveCredentials({
        ...env,
        SVC_SERVER: 'http://127.0.0.1:7420',
        SVC_CONFIG_DIR: path.join(env.SVC_CONFIG_DIR!, 'none'),
      });
      assert.equal(local.sources.token.kind, 'local');
    });

    it('uses the credentials file before a server on this machine', async () => {
      const env = envWith();
      ownerToken(env);
      await writeCredentials({ server: 'http://file.example:7420', token: 'svc_fromfile', workspace: 'default' }, env);
      const found = await resolveCredentials(env);
      assert.deepEqual([found.server, found.token], ['http://file.example:7420', 'svc_fromfile']);
    });

    it('falls back to 127.0.0.1:$SVC_PORT with the owner token of $SVC_DATA_DIR', async () => {
      const env = envWith({ SVC_PORT: '7999' });
      const secret = ownerToken(env);
      const found = await resolveCredentials(env);
      assert.deepEqual(
        [found.server, found.token, found.sources.server.kind, found.sources.token.description],
        ['http://127.0.0.1:7999', secret, 'local', path.join(env.SVC_DATA_DIR!, 'owner-token')],
      );
    });

    it('stops with not_signed_in, naming where it looked and suggesting svc login, when no token is anywhere', async () => {
      const env = envWith();
      const error = await rejection(resolveCredentials(env));
      assert.equal(error.code, 'not_signed_in');
      assert.match(error.message, /SVC_TOKEN is not set/);
      assert.ok(error.message.includes(credentialsPath(env)), error.message);
      assert.ok(error.message.includes(path.join(env.SVC_DATA_DIR!, 'owner-token')), error.message);
      assert.match(error.hint ?? '', /svc login/);
    });

    it('refuses an SVC_SERVER that is not an http(s) URL', async () => {
      const error = await rejection(resolveCredentials(envWith({ SVC_SERVER: 'svc.example.com', SVC_TOKEN: 'svc_x' })));
      assert.equal(error.code, 'config_invalid');
      assert.match(error.message, /SVC_SERVER/);
    });

    it('refuses a damaged owner token with config_invalid', async () => {
      const env = envWith();
      writeFileSync(path.join(env.SVC_DATA_DIR!, 'owner-token'), 'not a token\n');
      assert.equal((await rejection(resolveCredentials(env))).code, 'config_invalid');
    });
  });

  describe('resolveServer()', () => {
    it('takes SVC_SERVER, else the file, else this machine', async () => {
      const env = envWith();
      assert.equal((await resolveServer(env)).url, 'http://127.0.0.1:7420');
      await writeCredentials({ server: 'https://file.example', token: 'svc_t', workspace: null }, env);
      assert.equal((await resolveServer(env)).url, 'https://file.example');
      assert.equal((await resolveServer({ ...env, SVC_SERVER: 'http://env.example:1234' })).url, 'http://env.example:1234');
    });
  });

  describe('writeCredentials()', () => {
    it('writes version 1 with the server, token, workspace and time, mode 0600 in a 0700 folder, leaving no temp file', async () => {
      const env = envWith();
      const file = await writeCredentials({ server: 'http://127.0.0.1:7420', token: 'svc_abc', workspace: 'default' }, env);
      assert.equal(file, credentialsPath(env));
      const saved = JSON.parse(readFileSync(file, 'utf8'));
      assert.deepEqual(
        { ...saved, savedAt: undefined },
        { version: 1, server: 'http://127.0.0.1:7420', token: 'svc_abc', workspace: 'default', savedAt: undefined },
      );
      assert.equal(new Date(saved.savedAt).toISOString(), saved.savedAt);
      assert.equal(modeOf(file), 0o600);
      assert.equal(modeOf(path.dirname(file)), 0o700);
      assert.deepEqual(readdirSync(path.dirname(file)), ['credentials.json']);
    });

    it('replaces the file as a whole, and tightens a folder open to others', async () => {
      const env = envWith();
      mkdirSync(env.SVC_CONFIG_DIR!, { mode: 0o755 });
      chmodSync(env.SVC_CONFIG_DIR!, 0o755);
      await writeCredentials({ server: 'http://a.example', token: 'svc_a', workspace: 'a' }, env);
      await writeCredentials({ server: 'http://b.example', token: 'svc_b', workspace: null }, env);
      const read = await readCredentials(env);
      assert.deepEqual(
        { ...read?.credentials, savedAt: undefined },
        { version: 1, server: 'http://b.example', token: 'svc_b', workspace: null, savedAt: undefined },
      );
      assert.equal(modeOf(env.SVC_CONFIG_DIR!), 0o700);
    });
  });

  describe('readCredentials()', () => {
    it('answers null without a file', async () => {
      assert.equal(await readCredentials(envWith()), null);
    });

    it('tightens a file open to other users to 0600, with a warning', async () => {
      const env = envWith();
      const file = await writeCredentials({ server: 'http://a.example', token: 'svc_a', workspace: null }, env);
      chmodSync(file, 0o644);
      const read = await readCredentials(env);
      assert.equal(read?.credentials.token, 'svc_a');
      assert.match(read?.warnings.join('\n') ?? '', /open to other users \(mode 0644\); tightened it to 0600/);
      assert.equal(modeOf(file), 0o600);
    });

    const damaged: [string, string, RegExp][] = [
      ['not JSON', '{"version": 1,', /is not valid JSON/],
      ['not an object', '[1, 2]', /does not hold a JSON object/],
      ['no version', '{"server": "http://a.example", "token": "svc_a"}', /has no "version": 1/],
      ['a newer version', '{"version": 2, "server": "http://a.example", "token": "svc_a"}', /written by a newer svc/],
      ['a server that is not a URL', '{"version": 1, "server": "a.example", "token": "svc_a"}', /"server" that is not an http\(s\) URL/],
      ['no token', '{"version": 1, "server": "http://a.example"}', /has no "token"/],
      ['a token with a space', '{"version": 1, "server": "http://a.example", "token": "svc a"}', /has no "token"/],
      [
        'a workspace that is not a string',
        '{"version": 1, "server": "http://a.example", "token": "svc_a", "workspace": 3}',
        /"workspace" that is not a string/,
      ],
    ];
    for (const [what, content, message] of damaged) {
      it(`refuses a file with ${what}: config_invalid naming the file, with a hint to log in again`, async () => {
        const env = envWith();
        mkdirSync(env.SVC_CONFIG_DIR!, { recursive: true });
        writeFileSync(credentialsPath(env), content, { mode: 0o600 });
        for (const attempt of [() => readCredentials(env), () => resolveCredentials({ ...env, SVC_TOKEN: 'svc_x' })]) {
          const error = await rejection(attempt());
          assert.equal(error.code, 'config_invalid');
          assert.ok(error.message.includes(credentialsPath(env)), error.message);
          assert.match(error.message, message);
          assert.match(error.hint ?? '', /svc login/);
        }
      });
    }

    it('refuses a symbolic link in place of the file', async () => {
      const env = envWith();
      mkdirSync(env.SVC_CONFIG_DIR!, { recursive: true });
      const elsewhere = path.join(tempDir('svc-elsewhere-'), 'c.json');
      writeFileSync(elsewhere, '{}');
      symlinkSync(elsewhere, credentialsPath(env));
      const error = await rejection(readCredentials(env));
      assert.equal(error.code, 'config_invalid');
      assert.match(error.message, /symbolic link/);
    });
  });

  describe('deleteCredentials()', () => {
    it('deletes the file, and says false when there was none', async () => {
      const env = envWith();
      await writeCredentials({ server: 'http://a.example', token: 'svc_a', workspace: null }, env);
      assert.equal(await deleteCredentials(env), true);
      assert.equal(await readCredentials(env), null);
      assert.equal(await deleteCredentials(env), false);
    });
  });
});

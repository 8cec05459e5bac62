import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { secretCreate, secretDelete, secretList, secretReseal, secretSet } from '../../cli/commands/secret.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig, tempDir } from '../helpers/config.js';
import { capture, rejectsWith } from './fixture.js';

/**
 * `svc secret create | set | list | delete | reseal`, run in-process against a
 * real platform over real HTTP: values from arguments and a dotenv file (read
 * by the `dotenv` package), never printed; delete asks first.
 */
describe('CLI secret commands against a real server', function () {
  this.timeout(60_000);
  let platform: Platform;
  let env: Record<string, string>;
  const value = 'p@ss "word" # not a comment';

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
  });
  after(async () => platform?.close());

  const output = (run: ReturnType<typeof capture>) => `${run.stdout()}${run.stderr()}`;

  it('creates a secret from a dotenv file and KEY=VALUE pairs (which win), printing keys and never a value', async () => {
    const dir = tempDir('svc-dotenv-');
    writeFileSync(path.join(dir, '.env'), `# database\nexport DATABASE_URL='${value}'\nPOOL=5\nMULTI="line one\nline two"\n`);
    const run = capture({ env, cwd: dir });
    await secretCreate(run.context, 'db', ['POOL=10', 'EMPTY='], { 'from-dotenv': '.env' });
    assert.match(run.stderr(), /created the secret db with 4 keys \(DATABASE_URL, EMPTY, MULTI, POOL\)/);
    assert.ok(!output(run).includes('p@ss') && !output(run).includes('line two'));
    const values = await platform.controlPlane.secrets.environment({ workspace: 'default', app: 'x', stage: 'deployed' }, ['db']);
    assert.deepEqual(values, { DATABASE_URL: value, POOL: '10', MULTI: 'line one\nline two', EMPTY: '' });
  });

  it('refuses a pair without "=" or with an empty key, naming its position and not its text', async () => {
    const run = capture({ env });
    const error = await rejectsWith(secretCreate(run.context, 'other', ['A=1', 'hush-hush']));
    assert.equal(error.code, 'usage_invalid');
    assert.match(error.message, /argument 2 is not KEY=VALUE/);
    assert.ok(!error.message.includes('hush'));
    assert.equal((await rejectsWith(secretCreate(capture({ env }).context, 'other', ['=x']))).code, 'usage_invalid');
    assert.equal(
      (await rejectsWith(secretCreate(capture({ env }).context, 'other', [], { 'from-dotenv': '/nonexistent/.env' }))).code,
      'usage_invalid',
    );
  });

  it('sets and removes keys, lists names and keys as a table and as JSON', async () => {
    const set = capture({ env });
    await secretSet(set.context, 'db', ['POOL=20'], { remove: ['EMPTY'] });
    assert.match(set.stderr(), /updated the secret db: 3 keys \(DATABASE_URL, MULTI, POOL\)/);
    assert.match(set.stderr(), /next deploy \(or now with --restart\)/);
    const table = capture({ env });
    await secretList(table.context);
    assert.match(table.stdout(), /^NAME +KEYS +UPDATED +BY\ndb +DATABASE_URL, MULTI, POOL /);
    const json = capture({ env });
    await secretList(json.context, { json: true });
    assert.deepEqual(
      JSON.parse(json.stdout()).secrets.map((s: { name: string; keys: string[] }) => [s.name, s.keys]),
      [['db', ['DATABASE_URL', 'MULTI', 'POOL']]],
    );
    assert.ok(!json.stdout().includes('p@ss'));
  });

  it('delete needs --yes without a terminal, asks at one, and stops on anything but yes', async () => {
    const refused = await rejectsWith(secretDelete(capture({ env }).context, 'db'));
    assert.equal(refused.code, 'confirmation_required');
    const declined = capture({ env, interactive: true, answers: ['n'] });
    assert.equal((await rejectsWith(secretDelete(declined.context, 'db'))).code, 'confirmation_required');
    assert.match(declined.stderr(), /Delete the secret db\? .* \[y\/N\]/);
    await secretDelete(capture({ env, interactive: true, answers: ['y'] }).context, 'db');
    assert.equal((await rejectsWith(secretDelete(capture({ env }).context, 'db', { yes: true }))).code, 'secret_not_found');
  });

  it('reseal (the operator) seals every value again under the first key', async () => {
    await secretCreate(capture({ env }).context, 'again', ['A=1']);
    const run = capture({ env });
    await secretReseal(run.context, { json: true });
    assert.deepEqual(JSON.parse(run.stdout()), { secrets: 0, values: 0 }, 'one key: everything is under it already');
  });
});

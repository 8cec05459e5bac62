import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { testPython } from '../python/env.js';

const run = promisify(execFile);

/** Routes whose bodies schemathesis cannot make (gzip, pickle, NDJSON): their own tests send real ones. */
const BINARY_BODIES = ['uploadBundle', 'callRun', 'sendMapInputs'];
/** Routes that would end the fuzzer's own access halfway (revoking its token, removing its account). */
const ENDS_ITS_ACCESS = ['revokeToken', 'removeMember'];
/**
 * What every answer must be: never a server error; a status, content type, headers and body that
 * docs/openapi.json declares for the route.
 */
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
];

/**
 * The API fuzzed by a tool svc did not write: schemathesis 4 (the tests' Python) generates requests
 * for every operation of docs/openapi.json (its coverage, fuzzing and stateful phases, a bounded
 * and deterministic number of cases) against a real server, as the owner of a workspace of its
 * own who is not the server's operator, while another workspace holds a secret, a volume and a
 * token. No answer may be a 5xx or differ from the declared schema, and the other workspace's
 * objects must be exactly as they were.
 */
describe('the API under schemathesis (a real server)', function () {
  this.timeout(300_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let fuzzer: string;

  /** What workspace default holds, as its owner reads it. */
  const holdings = async () => {
    const read = async (route: string) => (await call('GET', route, { token: owner })).json;
    // A token's lastUsedAt moves with these very reads: everything else must stay.
    const tokens = (await read('/api/v1/tokens')).tokens.map(({ lastUsedAt: _, ...token }: { lastUsedAt: unknown }) => token);
    return { secrets: await read('/api/v1/secrets'), volumes: await read('/api/v1/volumes'), tokens };
  };

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    assert.equal((await call('POST', '/api/v1/secrets', { token: owner, json: { name: 'kept', values: { KEY: 'value' } } })).status, 201);
    assert.equal((await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'kept' } })).status, 201);
    assert.equal((await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'kept' } })).status, 201);
    // The fuzzer: the owner of workspace fuzz, invited there and signed in; not the server's operator.
    assert.equal((await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'fuzz' } })).status, 201);
    const ownerInFuzz = (await call('POST', '/api/v1/workspaces/fuzz/token', { token: owner, json: {} })).json.secret as string;
    const invited = await call('POST', '/api/v1/members', { token: ownerInFuzz, json: { name: 'Fuzz Owner', role: 'owner' } });
    assert.equal(invited.status, 201, invited.text);
    const signedIn = await call('POST', '/api/v1/sign-in', { json: { secret: String(invited.json.path).split('#')[1] } });
    assert.equal(signedIn.status, 200, signedIn.text);
    fuzzer = signedIn.json.secret;
  });
  after(async () => platform?.close());

  it('answers every generated request within its declared schema, never with a 5xx, and leaves another workspace alone', async () => {
    const before = await holdings();
    await fuzz(platform.url, fuzzer);
    assert.deepEqual(await holdings(), before, "workspace default's secrets, volumes and tokens are as they were");
  });
});

/** The operator-only routes too, on a server that has stored nothing yet (its first minutes, where a reseal once answered 500). */
describe('the API under schemathesis, as the operator of a new server', function () {
  this.timeout(300_000);
  let platform: Platform;
  before(async () => (platform = await startPlatform({ config: testConfig() })));
  after(async () => platform?.close());

  it("answers the server operator's requests within their declared schemas, never with a 5xx", async () => {
    await fuzz(platform.url, platform.ownerToken.secret);
  });
});

/** Runs schemathesis over every operation as `token`; fails with its report when it found anything. */
async function fuzz(url: string, token: string): Promise<void> {
  const args = [
    '-c',
    'import sys; from schemathesis.cli import schemathesis; sys.exit(schemathesis())',
    'run',
    path.join(packageRoot, 'docs', 'openapi.json'),
    '--url',
    url,
    '--header',
    `Authorization: Bearer ${token}`,
    '--checks',
    CHECKS.join(','),
    '--max-examples',
    '5',
    '--generation-deterministic',
    '--request-timeout',
    '20',
    '--no-color',
    ...[...BINARY_BODIES, ...ENDS_ITS_ACCESS].flatMap((id) => ['--exclude-operation-id', id]),
  ];
  let output: string;
  try {
    // In a folder of its own: schemathesis and Hypothesis keep their caches in the working directory.
    output = (
      await run(testPython, args, { cwd: tempDir('svc-fuzz-'), maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } })
    ).stdout;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    assert.fail(`schemathesis exited ${failed.code}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
  }
  const tested = Number(/Tested: (\d+)/.exec(output)?.[1] ?? 0);
  assert.ok(tested >= 80, `schemathesis tested ${tested} operations:\n${output}`);
  const generated = Number(/(\d+) generated/.exec(output)?.[1] ?? 0);
  assert.ok(generated >= 1000, `schemathesis generated ${generated} requests:\n${output}`);
}

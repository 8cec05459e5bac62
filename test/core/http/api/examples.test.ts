import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleExample, firstParagraph, listExamples } from '../../../../core/http/api/examples.js';
import { extractBundle } from '../../../../core/infra/bundles/extract.js';
import { examplesRoot } from '../../../../core/model/paths.js';
import { tempDir } from '../../../helpers/config.js';
import { startApiPlatform, type ApiFixture } from './platform.js';

/** Every file under `dir`, relative, sorted, with its content. */
function filesOf(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) Object.assign(files, filesOf(dir, relative));
    else files[relative] = readFileSync(path.join(dir, relative), 'utf8');
  }
  return files;
}

/** The examples shipped in examples/: folders with an app.py. */
const shipped = () =>
  readdirSync(examplesRoot, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

describe('API /api/v1/examples', function () {
  this.timeout(60_000);
  let f: ApiFixture;
  before(async () => (f = await startApiPlatform()));
  after(async () => f?.platform.close());
  afterEach(() => assert.deepEqual(f.reports, [], 'no unexpected errors'));

  it('GET /examples lists every example with the first paragraph of its README', async () => {
    const answer = await f.call('GET', '/api/v1/examples', { token: f.owner });
    assert.equal(answer.status, 200, answer.text);
    const { examples } = answer.json as { examples: { name: string; description: string }[] };
    assert.deepEqual(
      examples.map((e) => e.name),
      shipped(),
    );
    assert.ok(examples.some((e) => e.name === 'asgi-fastapi'));
    for (const example of examples) {
      assert.deepEqual(Object.keys(example).sort(), ['description', 'name']);
      assert.equal(example.description, firstParagraph(readFileSync(path.join(examplesRoot, example.name, 'README.md'), 'utf8')));
      assert.notEqual(example.description, '', `${example.name} has a description`);
      assert.doesNotMatch(example.description, /^#|\n/, 'one line, not the title');
    }
    assert.match(examples.find((e) => e.name === 'quickstart')!.description, /^A first svc app: a function to run remotely/);
  });

  it("GET /examples/:name answers the example's files as a gzip tarball", async () => {
    const response = await fetch(`${f.platform.url}/api/v1/examples/realtime-chat`, { headers: { Authorization: `Bearer ${f.owner}` } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/gzip');
    assert.equal(response.headers.get('content-disposition'), 'attachment; filename="realtime-chat.tar.gz"');
    assert.match(response.headers.get('x-svc-bundle-sha256') ?? '', /^[0-9a-f]{64}$/);
    const data = Buffer.from(await response.arrayBuffer());
    assert.equal(Number(response.headers.get('content-length')), data.length);
    assert.deepEqual([...data.subarray(0, 2)], [0x1f, 0x8b]);

    const dir = tempDir('svc-example-api-');
    writeFileSync(path.join(dir, 'example.tar.gz'), data);
    await extractBundle(path.join(dir, 'example.tar.gz'), path.join(dir, 'out'));
    assert.deepEqual(filesOf(path.join(dir, 'out')), filesOf(path.join(examplesRoot, 'realtime-chat')));
  });

  it('answers the same bytes for the same example (the bundle is deterministic)', async () => {
    const get = async () =>
      Buffer.from(
        await (
          await fetch(`${f.platform.url}/api/v1/examples/quickstart`, { headers: { Authorization: `Bearer ${f.owner}` } })
        ).arrayBuffer(),
      );
    assert.ok((await get()).equals(await get()));
  });

  it('answers 404 not_found listing the examples for an unknown name, and for names that are not plain', async () => {
    const answer = await f.call('GET', '/api/v1/examples/nope', { token: f.owner });
    assert.equal(answer.status, 404);
    assert.equal(answer.json.error.code, 'not_found');
    assert.equal(answer.json.error.message, `there is no example "nope"; the examples are: ${shipped().join(', ')}.`);
    assert.deepEqual(answer.json.error.details, { examples: shipped() });
    for (const name of ['%2e%2e', '..%2F..%2Fpackage.json', '.%2Fquickstart', 'Quickstart', '%2Fetc']) {
      const sneaky = await f.call('GET', `/api/v1/examples/${name}`, { token: f.owner });
      assert.equal(sneaky.status, 404, name);
      assert.equal(sneaky.json.error.code, 'not_found', name);
    }
  });

  it('needs a token for both routes', async () => {
    for (const route of ['/api/v1/examples', '/api/v1/examples/quickstart']) {
      const anonymous = await f.call('GET', route);
      assert.equal(anonymous.status, 401, route);
      assert.equal(anonymous.json.error.code, 'unauthorized');
      const wrong = await f.call('GET', route, { token: 'svc_not-a-real-token' });
      assert.equal(wrong.status, 401, route);
    }
  });
});

describe('examples: listing and bundling', function () {
  this.timeout(60_000);

  it('firstParagraph takes the paragraph after the title, joined into one line', () => {
    assert.equal(firstParagraph('# Title\n\nFirst line\nsecond line.\n\nMore.\n'), 'First line second line.');
    assert.equal(firstParagraph('\uFEFF\n# Title\r\n\r\nWindows  text.\r\n'), 'Windows  text.');
    assert.equal(firstParagraph('No title here.\n\n# Later'), 'No title here.');
    assert.equal(firstParagraph('# Only a title\n'), '');
    assert.equal(firstParagraph('# Title\n\n## Section\n\ntext'), '');
    assert.equal(firstParagraph('# Title\n\n```sh\nsvc serve\n```\n'), '');
    assert.equal(firstParagraph('# Title\n\n- a list\n'), '');
    assert.equal(firstParagraph(''), '');
  });

  it('lists only folders with a valid name and an app.py, sorted, and no folder as none', async () => {
    const root = tempDir('svc-examples-');
    const make = (name: string, files: Record<string, string>) => {
      mkdirSync(path.join(root, name), { recursive: true });
      for (const [file, text] of Object.entries(files)) writeFileSync(path.join(root, name, file), text);
    };
    make('zeta', { 'app.py': '', 'README.md': '# Zeta\n\nLast.\n' });
    make('alpha', { 'app.py': '' });
    make('no-app', { 'README.md': '# No app\n\nSkipped.\n' });
    make('Bad_Name', { 'app.py': '' });
    writeFileSync(path.join(root, 'file.py'), '');
    assert.deepEqual(await listExamples(root), [
      { name: 'alpha', description: '' },
      { name: 'zeta', description: 'Last.' },
    ]);
    assert.deepEqual(await listExamples(path.join(root, 'missing')), []);
  });

  it('bundles an example without caches, virtual environments or what .svcignore excludes', async () => {
    const dir = tempDir('svc-example-src-');
    writeFileSync(path.join(dir, 'app.py'), 'import svc\n');
    writeFileSync(path.join(dir, 'README.md'), '# X\n\nY.\n');
    writeFileSync(path.join(dir, '.svcignore'), 'secrets.txt\n');
    writeFileSync(path.join(dir, 'secrets.txt'), 'no');
    for (const cache of ['__pycache__', '.venv', '.svc', '.pytest_cache']) {
      mkdirSync(path.join(dir, cache));
      writeFileSync(path.join(dir, cache, 'junk'), 'junk');
    }
    const { data, sha256 } = await bundleExample(dir);
    assert.match(sha256, /^[0-9a-f]{64}$/);
    const out = tempDir('svc-example-out-');
    writeFileSync(path.join(out, 'b.tar.gz'), data);
    await extractBundle(path.join(out, 'b.tar.gz'), path.join(out, 'x'));
    assert.deepEqual(Object.keys(filesOf(path.join(out, 'x'))).sort(), ['.svcignore', 'README.md', 'app.py']);
  });
});

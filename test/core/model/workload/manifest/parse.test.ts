import assert from 'node:assert/strict';
import { SvcError } from '../../../../../core/model/errors.js';
import { parseManifestText } from '../../../../../core/model/workload/manifest/parse.js';
import { sampleManifest } from './sample-manifest.js';

function failure(text: string): SvcError {
  try {
    parseManifestText(text);
  } catch (error) {
    assert.ok(error instanceof SvcError);
    return error;
  }
  assert.fail('expected parseManifestText to throw');
}

describe('parseManifestText()', () => {
  it('returns the manifest of valid text', () => {
    assert.deepEqual(parseManifestText(JSON.stringify(sampleManifest(), null, 2)), sampleManifest());
  });

  it('names the line, column and position of a JSON syntax error', () => {
    const error = failure('{\n  "manifest_version": 1,\n  "app": }\n}');
    assert.equal(error.code, 'manifest_invalid');
    assert.match(error.message, /not valid JSON at line 3, column 10 \(position 36\)/);
  });

  it('names the position where V8 does not (unexpected token)', () => {
    const error = failure('{"a":}');
    assert.match(error.message, /line 1, column 6 \(position 5\)/);
  });

  it('points at the end of truncated text', () => {
    assert.match(failure('{"a": [1, 2').message, /line 1, column 12 \(position 11\)/);
    assert.match(failure('').message, /line 1, column 1 \(position 0\)/);
  });

  it('points at text after the document (for example a stray print on stdout)', () => {
    assert.match(failure('{}\nhello').message, /line 2, column 1 \(position 3\)/);
  });

  it('throws manifest_invalid listing every issue of well-formed JSON that breaks rules', () => {
    const manifest = sampleManifest() as any;
    manifest.app.name = 'my app';
    manifest.workloads[1].options.cpu = 0;
    const error = failure(JSON.stringify(manifest));
    assert.equal(error.code, 'manifest_invalid');
    assert.match(error.message, /\(2 problems\)/);
    assert.match(
      error.message,
      /\n {2}- app\.name: "my app" has the character " " at position 3; only a-z, 0-9 and "-" are allowed \(a name is a lowercase DNS label/,
    );
    assert.match(error.message, /\n {2}- workloads\[1\]\.options\.cpu: must be a number from 0\.125 to 64, got 0/);
  });

  it('refuses app and workload names that are not lowercase DNS labels: 422 manifest_invalid with the path of each', () => {
    const manifest = sampleManifest() as any;
    manifest.app.name = 'Sample';
    manifest.workloads[0].name = 'say_hello';
    manifest.workloads[2].name = 'web--preview';
    manifest.workloads[3].name = 'api'; // reserved for workspaces only
    const error = failure(JSON.stringify(manifest));
    assert.equal(error.code, 'manifest_invalid');
    assert.equal(error.status, 422);
    assert.deepEqual(
      (error.details as any).issues.map((issue: { path: string }) => issue.path),
      ['app.name', 'workloads[0].name', 'workloads[2].name'],
    );
    assert.match(
      error.message,
      /\n {2}- app\.name: "Sample" has the upper-case letter "S"; names are lower case; try "sample" \(a name is a lowercase DNS label/,
    );
    assert.match(
      error.message,
      /\n {2}- workloads\[0\]\.name: "say_hello" has the character "_" at position 4; only a-z, 0-9 and "-" are allowed; try "say-hello"/,
    );
    assert.match(error.message, /\n {2}- workloads\[2\]\.name: "web--preview" must not contain "--"/);
  });

  it('accepts names the SDK derives from Python function names (say_hello → say-hello)', () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[0].name = 'say-hello';
    manifest.workloads[0].handler = 'say_hello';
    manifest.workloads[1].name = '9lives';
    assert.equal(parseManifestText(JSON.stringify(manifest)).workloads[0]?.name, 'say-hello');
  });
});

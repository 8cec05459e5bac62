import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { sdkPythonPath } from '../../../../../core/model/paths.js';
import { canonicalJson, type ImageIdFields, imageIdFor } from '../../../../../core/model/workload/manifest/image-id.js';

// Expected values come from Python: json.dumps(value, sort_keys=True, separators=(",", ":")) and hashlib.sha256.
describe('canonicalJson()', () => {
  it('sorts keys and leaves no spaces', () => {
    assert.equal(canonicalJson({ python_version: '3.11', python_packages: [] }), '{"python_packages":[],"python_version":"3.11"}');
  });

  it("escapes non-ASCII like Python's ensure_ascii", () => {
    assert.equal(canonicalJson(['café\u007f😀\n']), '["caf\\u00e9\\u007f\\ud83d\\ude00\\n"]');
  });
});

/** Images whose ids the SDK and the platform must compute alike: every kind of character a file or a value may hold. */
const parityCases: readonly ImageIdFields[] = [
  { python_version: '3.11', python_packages: [] },
  { python_version: '3.12', python_packages: ['tomli; python_version < "3.11"', 'pkg @ https://example.com/pkg-1.0-py3-none-any.whl'] },
  {
    python_version: '3.12',
    python_packages: ['numpy'],
    requirements_files: [
      { name: 'requirements.txt', content: 'six==1.16.0 \\\n  --hash=sha256:00\r\n# café ☕ 😀\t"quoted"\u0000\u001f\u007f\u2028' },
      { name: 'requirements.txt', content: '' },
      { name: 'éxtra reqs.txt', content: '--index-url https://example.com/simple\nidna\n' },
    ],
    env: { Z: 'last', A_1: 'ünïcode 😀 "q" \\ \n', _: '', HF_HOME: '/tmp/hf' },
  },
  { python_version: '3.10', python_packages: [], env: { ONLY: 'env' } },
];

describe('imageIdFor()', () => {
  it('matches the ids the Python SDK computes', () => {
    assert.equal(imageIdFor({ python_version: '3.11', python_packages: [] }), 'img-61363a1857b77906');
    assert.equal(imageIdFor({ python_version: '3.12', python_packages: ['numpy==1.26', 'requests>=2'] }), 'img-c571f9c62b239f5b');
    assert.equal(imageIdFor({ python_version: '3.10', python_packages: ['café\u007f😀\n'] }), 'img-7f3511366369639b');
  });

  it('depends on package order', () => {
    assert.notEqual(
      imageIdFor({ python_version: '3.12', python_packages: ['requests>=2', 'numpy==1.26'] }),
      imageIdFor({ python_version: '3.12', python_packages: ['numpy==1.26', 'requests>=2'] }),
    );
  });

  it('leaves empty requirements_files and env out, so that an image without them keeps its id', () => {
    const plain = { python_version: '3.11', python_packages: [] };
    assert.equal(imageIdFor({ ...plain, requirements_files: [], env: {} }), 'img-61363a1857b77906');
    assert.notEqual(imageIdFor({ ...plain, env: { A: '1' } }), 'img-61363a1857b77906');
    assert.notEqual(imageIdFor({ ...plain, requirements_files: [{ name: 'r.txt', content: '' }] }), 'img-61363a1857b77906');
  });

  it("covers the files' text and order, and the variables' values but not their order", () => {
    const base = { python_version: '3.11', python_packages: [] };
    const a = { name: 'a.txt', content: 'six\n' };
    const b = { name: 'b.txt', content: 'idna\n' };
    assert.notEqual(imageIdFor({ ...base, requirements_files: [a, b] }), imageIdFor({ ...base, requirements_files: [b, a] }));
    assert.notEqual(
      imageIdFor({ ...base, requirements_files: [a] }),
      imageIdFor({ ...base, requirements_files: [{ ...a, content: 'six==1.16\n' }] }),
    );
    assert.equal(imageIdFor({ ...base, env: { A: '1', B: '2' } }), imageIdFor({ ...base, env: { B: '2', A: '1' } }));
    assert.notEqual(imageIdFor({ ...base, env: { A: '1' } }), imageIdFor({ ...base, env: { A: '2' } }));
  });

  it("is byte for byte the SDK's image_id (sdk/python/svc/manifest/_build.py), run here", () => {
    const script =
      'import json, sys\nfrom svc.manifest import image_id\nprint(json.dumps([image_id(spec) for spec in json.load(sys.stdin)]))';
    const output = execFileSync(process.env.SVC_PYTHON ?? 'python3', ['-c', script], {
      input: JSON.stringify(parityCases),
      env: { ...process.env, PYTHONPATH: sdkPythonPath, PYTHONDONTWRITEBYTECODE: '1' },
      encoding: 'utf8',
    });
    assert.deepEqual(JSON.parse(output), parityCases.map(imageIdFor));
  });
});

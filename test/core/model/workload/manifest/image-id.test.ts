import assert from 'node:assert/strict';
import { canonicalJson, imageIdFor } from '../../../../../core/model/workload/manifest/image-id.js';

// Expected values come from Python: json.dumps(value, sort_keys=True, separators=(",", ":")) and hashlib.sha256.
describe('canonicalJson()', () => {
  it('sorts keys and leaves no spaces', () => {
    assert.equal(canonicalJson({ python_version: '3.11', python_packages: [] }), '{"python_packages":[],"python_version":"3.11"}');
  });

  it("escapes non-ASCII like Python's ensure_ascii", () => {
    assert.equal(canonicalJson(['café\u007f😀\n']), '["caf\\u00e9\\u007f\\ud83d\\ude00\\n"]');
  });
});

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
});

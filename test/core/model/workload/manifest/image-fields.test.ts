/**
 * An image's `requirements_files` and `env` (Image.pip_install_from_requirements, Image.env):
 * optional, part of the id, and checked as the SDK checks them.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { MAX_ENV_VALUE_BYTES, RESERVED_ENV_NAMES, RESERVED_ENV_PREFIX } from '../../../../../core/model/env-names.js';
import { sdkPythonPath } from '../../../../../core/model/paths.js';
import { MAX_IMAGE_ENV, requirementsFileRule } from '../../../../../core/model/workload/rules.js';
import { validateManifest } from '../../../../../core/model/workload/manifest/parse.js';
import { imageIdFor } from '../../../../../core/model/workload/manifest/image-id.js';
import type { ManifestImage, ManifestV1 } from '../../../../../core/model/workload/manifest/types.js';
import { resolveApp } from '../../../../../core/model/workload/resolve.js';
import { assertIssuesExactly } from './match-issues.js';
import { plainImageId, sampleManifest } from './sample-manifest.js';

/** The sample manifest with its plain image (images[0]) given `fields`, its id recomputed unless `id` says otherwise. */
function withPlainImage(fields: Partial<ManifestImage>, id?: string): ManifestV1 {
  const manifest = sampleManifest();
  const image = { ...manifest.images[0]!, ...fields };
  image.id = id ?? imageIdFor(image);
  manifest.images[0] = image;
  for (const workload of manifest.workloads) if (workload.image === plainImageId) workload.image = image.id;
  manifest.images.sort((a, b) => (a.id < b.id ? -1 : 1));
  return manifest;
}

const at = (manifest: ManifestV1, id: string): number => manifest.images.findIndex((image) => image.id === id);

describe('validateManifest(): requirements_files and env of an image', () => {
  it('accepts both, with any text pip reads', () => {
    const manifest = withPlainImage({
      requirements_files: [
        { name: 'requirements.txt', content: 'numpy>=1.26\n--index-url https://example.com/simple\n# -r commented.txt\n' },
        { name: 'requirements.txt', content: '' },
      ],
      env: { HF_HOME: '/tmp/hf', _A1: '', OMP_NUM_THREADS: '1' },
    });
    assert.deepEqual(validateManifest(manifest), []);
  });

  it('accepts requirement strings with specifiers, extras, markers and direct references', () => {
    const packages = [
      'numpy>=1.26,<2',
      'uvicorn[standard]>=0.30',
      'tomli; python_version < "3.11"',
      "pywin32 >= 306 ; sys_platform == 'win32'",
      'pkg @ https://example.com/pkg-1.0-py3-none-any.whl',
      'pkg2[extra] @ git+https://github.com/example/pkg@v1.0',
    ];
    assert.deepEqual(validateManifest(withPlainImage({ python_packages: packages })), []);
  });

  it('checks the id against the files and variables', () => {
    const manifest = withPlainImage({ env: { A: '1' } });
    const id = manifest.workloads[1]!.image;
    manifest.images[at(manifest, id)]!.env = { A: '2' };
    assertIssuesExactly(validateManifest(manifest), [
      {
        path: `images[${at(manifest, id)}].id`,
        message: `does not match the image's python_version, python_packages and env; expected ${imageIdFor({ python_version: '3.11', python_packages: [], env: { A: '2' } })}`,
      },
    ]);
    const files = withPlainImage({ requirements_files: [{ name: 'r.txt', content: 'six\n' }] });
    const filesId = files.workloads[1]!.image;
    files.images[at(files, filesId)]!.requirements_files = [{ name: 'r.txt', content: 'six==1.16\n' }];
    assertIssuesExactly(validateManifest(files), [
      {
        path: `images[${at(files, filesId)}].id`,
        message: "does not match the image's python_version, python_packages and requirements_files",
      },
    ]);
  });

  it('refuses a requirements file that names another file, a bad name, or a file over 256 KiB', () => {
    const manifest = withPlainImage({
      requirements_files: [
        { name: 'requirements.txt', content: 'six\n  -r base.txt\n' },
        { name: '../etc/passwd', content: '--constraint=c.txt' },
        { name: 'big.txt', content: '#'.repeat(256 * 1024 + 1) },
        { name: '..', content: '-rbase.txt' },
      ],
    });
    // The id is checked too, and matches: a name or text the schema refuses still has a content address.
    const index = at(manifest, manifest.workloads[1]!.image);
    assertIssuesExactly(validateManifest(manifest), [
      { path: `images[${index}].requirements_files[0].content`, message: 'line 2 ("-r base.txt") names another file' },
      {
        path: `images[${index}].requirements_files[1].name`,
        message: 'must be a file name without a folder, like "requirements.txt", got "../etc/passwd"',
      },
      { path: `images[${index}].requirements_files[1].content`, message: 'line 1 ("--constraint=c.txt") names another file' },
      { path: `images[${index}].requirements_files[2].content`, message: 'must be at most 262144 characters (256 KiB)' },
      { path: `images[${index}].requirements_files[3].name`, message: 'must be a file name without a folder' },
      { path: `images[${index}].requirements_files[3].content`, message: 'line 1 ("-rbase.txt") names another file' },
    ]);
  });

  it('refuses a requirements file entry of the wrong shape', () => {
    const manifest = withPlainImage(
      { requirements_files: [{ name: 'r.txt' } as never, { name: 'r.txt', content: 1, x: 2 } as never] },
      plainImageId,
    );
    const index = at(manifest, plainImageId);
    assertIssuesExactly(validateManifest(manifest), [
      { path: `images[${index}].requirements_files[0].content`, message: 'missing key' },
      { path: `images[${index}].requirements_files[1].x`, message: 'unknown key' },
      { path: `images[${index}].requirements_files[1].content`, message: 'must be a string, got number' },
    ]);
  });

  it('refuses variables svc sets itself, names that are not portable, and values an environment cannot hold', () => {
    const manifest = withPlainImage(
      { env: { SVC_APP: 'x', PYTHONPATH: '/x', 'A-B': 'x', '1A': 'x', OK: 'a\u0000b', BIG: 'x'.repeat(32 * 1024 + 1), NUM: 1 as never } },
      plainImageId,
    );
    const index = at(manifest, plainImageId);
    assertIssuesExactly(validateManifest(manifest), [
      { path: `images[${index}].env.SVC_APP`, message: 'is a variable svc sets in every container itself (SVC_*, PYTHONPATH' },
      { path: `images[${index}].env.PYTHONPATH`, message: 'choose another name' },
      { path: `images[${index}].env["A-B"]`, message: '"A-B" is not an environment variable name' },
      { path: `images[${index}].env["1A"]`, message: 'is not an environment variable name' },
      { path: `images[${index}].env.OK`, message: 'holds a NUL character' },
      { path: `images[${index}].env.BIG`, message: 'is over 32768 bytes' },
      { path: `images[${index}].env.NUM`, message: 'must be a string, got number' },
    ]);
  });

  it('resolves them into ImageSpec.requirementsFiles and .env, empty when absent', () => {
    const manifest = withPlainImage({ requirements_files: [{ name: 'r.txt', content: 'six\n' }], env: { A: '1' } });
    const spec = resolveApp(manifest);
    const image = spec.images.find((candidate) => candidate.id === manifest.workloads[1]!.image)!;
    assert.deepEqual(image.requirementsFiles, [{ name: 'r.txt', content: 'six\n' }]);
    assert.deepEqual(image.env, { A: '1' });
    const plain = resolveApp(sampleManifest()).images[0]!;
    assert.deepEqual([plain.requirementsFiles, plain.env], [[], {}]);
  });
});

describe('the bounds of requirements_files and env, in the SDK and here', () => {
  it('are the same numbers and names (sdk/python/svc/_image.py, _image_files.py, _checks.py)', () => {
    const script = [
      'import json',
      'from svc import _checks, _image, _image_files',
      'print(json.dumps({"files": _image.MAX_REQUIREMENTS_FILES, "bytes": _image_files.MAX_FILE_BYTES,',
      '  "variables": _image.MAX_ENV_VARIABLES, "value": _checks.MAX_ENV_VALUE_BYTES,',
      '  "reserved": list(_checks.RESERVED_ENV_KEYS), "prefix": _checks.RESERVED_ENV_PREFIX}))',
    ].join('\n');
    const sdk = JSON.parse(
      execFileSync(process.env.SVC_PYTHON ?? 'python3', ['-c', script], {
        env: { ...process.env, PYTHONPATH: sdkPythonPath, PYTHONDONTWRITEBYTECODE: '1' },
        encoding: 'utf8',
      }),
    );
    assert.deepEqual(sdk, {
      files: requirementsFileRule.maxFiles,
      bytes: requirementsFileRule.maxChars,
      variables: MAX_IMAGE_ENV,
      value: MAX_ENV_VALUE_BYTES,
      reserved: [...RESERVED_ENV_NAMES],
      prefix: RESERVED_ENV_PREFIX,
    });
  });
});

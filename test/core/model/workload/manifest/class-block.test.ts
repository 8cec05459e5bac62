import assert from 'node:assert/strict';
import { validateManifest } from '../../../../../core/model/workload/manifest/parse.js';
import { parseManifest } from '../../../../../core/model/workload/resolve.js';
import { assertIssuesExactly } from './match-issues.js';
import { sampleManifest } from './sample-manifest.js';

/** The sample manifest with its function (workloads[0]) made an `@app.cls` class of two methods. */
function withClass(): any {
  const manifest = sampleManifest() as any;
  manifest.workloads[0].handler = 'Model';
  manifest.workloads[0].class = {
    methods: [
      {
        name: 'predict',
        doc: 'Scores a text.',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
        returns: { type: 'number' },
      },
      { name: 'ready', doc: null, parameters: { type: 'object', properties: {}, required: [] }, returns: {} },
    ],
    enter: [
      { name: 'boot', snap: true },
      { name: 'load', snap: false },
    ],
    exit: 'close',
    parameters: [
      { name: 'size', type: 'str', default: 'small' },
      { name: 'seed', type: 'bytes', default: { base64: 'AP8=' } },
      { name: 'layers', type: 'int' },
    ],
  };
  return manifest;
}

describe('a manifest function that is an @app.cls class (its `class` block)', () => {
  it('validates, and the resolved workload keeps the block', () => {
    const manifest = withClass();
    assert.deepEqual(validateManifest(manifest), []);
    const { workloads } = parseManifest(manifest);
    assert.deepEqual(workloads[0]?.class, manifest.workloads[0].class);
    assert.equal(workloads[1]?.class, undefined);
  });

  it('says what is wrong in each part of the block, with its path', () => {
    const manifest = withClass();
    const block = manifest.workloads[0].class;
    block.methods[0].name = 'not a name';
    block.methods[1].parameters = { properties: {} };
    block.enter[0].snap = 'yes';
    block.exit = 3;
    block.extra = true;
    assertIssuesExactly(validateManifest(manifest), [
      { path: 'workloads[0].class.extra', message: 'unknown key' },
      { path: 'workloads[0].class.methods[0].name', message: 'must be a Python identifier, like "predict", got "not a name"' },
      { path: 'workloads[0].class.methods[1].parameters.type', message: 'missing; parameters are an "object" schema' },
      { path: 'workloads[0].class.enter[0].snap', message: 'must be a boolean, got string' },
      { path: 'workloads[0].class.exit', message: 'must be null or a method name, got number' },
    ]);
  });

  it('checks the parameters: a known type, distinct names, and a default of the parameter type', () => {
    const manifest = withClass();
    manifest.workloads[0].class.parameters = [
      { name: 'size', type: 'float' },
      { name: 'layers', type: 'int', default: 1.5 },
      { name: 'fast', type: 'bool', default: 'yes' },
      { name: 'seed', type: 'bytes', default: { base64: '***' } },
      { name: 'layers', type: 'str' },
    ];
    assertIssuesExactly(validateManifest(manifest), [
      { path: 'workloads[0].class.parameters[0].type', message: 'must be one of str, int, bool, bytes, got "float"' },
      { path: 'workloads[0].class.parameters[1].default', message: 'must be an integer (within ±2^53), got 1.5' },
      { path: 'workloads[0].class.parameters[2].default', message: 'must be true or false, got string' },
      { path: 'workloads[0].class.parameters[3].default', message: 'must hold valid base64 in "base64"' },
      { path: 'workloads[0].class.parameters[4].name', message: 'duplicate parameter "layers" (also parameters[1])' },
    ]);
  });

  it('takes the block on an endpoint that serves a method (`serves`), and refuses it on the other kinds', () => {
    const manifest = withClass();
    const served = manifest.workloads[1];
    served.class = { ...structuredClone(manifest.workloads[0].class), serves: 'rate' };
    assert.deepEqual(validateManifest(manifest), []);
    assert.equal(parseManifest(manifest).workloads[1]?.class?.serves, 'rate');
    delete served.class.serves;
    manifest.workloads[0].class.serves = 'predict';
    manifest.workloads[2].class = structuredClone(manifest.workloads[1].class);
    assertIssuesExactly(validateManifest(manifest), [
      { path: 'workloads[0].class.serves', message: 'unknown key' },
      { path: 'workloads[1].class.serves', message: 'missing key' },
      {
        path: `workloads[2].class`,
        message: `is only for an @app.cls class and the endpoints of its methods, not for kind ${manifest.workloads[2].kind}`,
      },
    ]);
  });
});

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseManifestText, validateManifest } from '../../../../core/model/workload/manifest/parse.js';
import { parseManifest } from '../../../../core/model/workload/resolve.js';
import type { AppSpec, ImageSpec, ScalingSpec } from '../../../../core/model/workload/types.js';
import { manifestFixtures } from './manifest/fixtures.js';

const text = readFileSync(path.join(manifestFixtures, 'quickstart.json'), 'utf8');

const image: ImageSpec = { id: 'img-61363a1857b77906', pythonVersion: '3.11', pythonPackages: [], requirementsFiles: [], env: {} };
const scaling: ScalingSpec = {
  workers: 1,
  concurrency: 1,
  maxPendingTasks: 100,
  keepWarmSeconds: 60,
  checkpointEnabled: false,
  autoscaler: { minContainers: 0, maxContainers: 1, tasksPerContainer: 1 },
};
const resources = { cpu: 1, memoryMiB: 512 };

const expected: AppSpec = {
  name: 'quickstart',
  entry: 'app',
  sdkVersion: '0.1.0',
  images: [image],
  workloads: [
    {
      app: 'quickstart',
      name: 'square',
      kind: 'function',
      handler: 'square',
      onStart: null,
      doc: 'Squares a number.',
      image,
      resources,
      http: null,
      scaling,
      parameters: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
      returns: { type: 'integer' },
      timeout: 300,
      retries: null,
      schedule: null,
    },
    {
      app: 'quickstart',
      name: 'hello',
      kind: 'endpoint',
      handler: 'hello',
      onStart: null,
      doc: 'Says hello to whoever asks.',
      image,
      resources,
      http: { route: '/hello', methods: ['GET'], authorized: false, domain: null },
      scaling,
      parameters: { type: 'object', properties: { name: { type: 'string', default: 'world' } }, required: [], additionalProperties: false },
      returns: { type: 'object' },
      timeout: 300,
    },
    {
      app: 'quickstart',
      name: 'greet',
      kind: 'endpoint',
      handler: 'greet',
      onStart: null,
      doc: 'Greets someone by name.',
      image,
      resources,
      http: { route: '/greet', methods: ['POST'], authorized: true, domain: null },
      scaling,
      parameters: {
        type: 'object',
        properties: { name: { type: 'string' }, excited: { type: 'boolean', default: false } },
        required: ['name'],
        additionalProperties: false,
      },
      returns: {
        type: 'object',
        title: 'Greeting',
        properties: { message: { type: 'string' }, length: { type: 'integer' } },
        required: ['message', 'length'],
      },
      timeout: 300,
    },
  ],
};

describe('the quickstart golden manifest', () => {
  it('is valid', () => {
    assert.deepEqual(validateManifest(JSON.parse(text)), []);
  });

  it('parses from its text', () => {
    assert.deepEqual(parseManifestText(text), JSON.parse(text));
  });

  it('resolves to the expected model', () => {
    assert.deepEqual(parseManifest(JSON.parse(text)), expected);
  });
});

import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { defaultScaling } from '../../../../core/model/workload/defaults.js';
import { validateManifest } from '../../../../core/model/workload/manifest/parse.js';
import { parseManifest, resolveApp } from '../../../../core/model/workload/resolve.js';
import type { AppSpec, ImageSpec } from '../../../../core/model/workload/types.js';
import { numpyImageId, plainImageId, sampleManifest } from './manifest/sample-manifest.js';

const plainImage: ImageSpec = { id: plainImageId, pythonVersion: '3.11', pythonPackages: [], requirementsFiles: [], env: {} };
const numpyImage: ImageSpec = {
  id: numpyImageId,
  pythonVersion: '3.12',
  pythonPackages: ['numpy==1.26', 'requests>=2'],
  requirementsFiles: [],
  env: {},
};
const singleContainer = { minContainers: 0, maxContainers: 1, tasksPerContainer: 1 };

describe('resolveApp()', () => {
  it('turns every kind into the camelCase model', () => {
    const expected: AppSpec = {
      name: 'sample',
      entry: 'app',
      sdkVersion: '0.1.0',
      images: [plainImage, numpyImage],
      workloads: [
        {
          app: 'sample',
          name: 'square',
          kind: 'function',
          handler: 'square',
          onStart: null,
          doc: null,
          image: numpyImage,
          resources: { cpu: 0.5, memoryMiB: 2048 },
          http: null,
          scaling: {
            workers: 1,
            concurrency: 1,
            maxPendingTasks: 100,
            keepWarmSeconds: 60,
            checkpointEnabled: false,
            autoscaler: singleContainer,
          },
          parameters: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
          returns: { type: 'integer' },
          // The sample is a manifest from before time-outs: the defaults apply.
          timeout: 300,
          retries: null,
          schedule: null,
        },
        {
          app: 'sample',
          name: 'greet',
          kind: 'endpoint',
          handler: 'greet',
          onStart: 'load_model',
          doc: 'Greets someone by name.',
          image: plainImage,
          resources: { cpu: 1, memoryMiB: 512 },
          http: { route: '/greet', methods: ['POST'], authorized: false, domain: 'api.example.com' },
          scaling: {
            workers: 2,
            concurrency: 4,
            maxPendingTasks: 50,
            keepWarmSeconds: 120,
            checkpointEnabled: true,
            autoscaler: { minContainers: 1, maxContainers: 5, tasksPerContainer: 8 },
          },
          parameters: {
            type: 'object',
            properties: { name: { type: 'string' }, polite: { type: 'boolean', default: true } },
            required: ['name'],
            additionalProperties: false,
          },
          returns: { type: 'object', title: 'Greeting', properties: { text: { type: 'string' } }, required: ['text'] },
          timeout: 300,
        },
        {
          app: 'sample',
          name: 'web',
          kind: 'asgi',
          handler: null,
          onStart: null,
          doc: null,
          image: plainImage,
          resources: { cpu: 2, memoryMiB: 1024 },
          http: { route: '/', methods: [], authorized: true, domain: null },
          scaling: {
            workers: 1,
            concurrency: 100,
            maxPendingTasks: 100,
            keepWarmSeconds: 300,
            checkpointEnabled: false,
            autoscaler: singleContainer,
          },
          parameters: null,
          returns: null,
          openapi: '/openapi.json',
        },
        {
          app: 'sample',
          name: 'chat',
          kind: 'realtime',
          handler: 'Chat.on_message',
          onStart: 'Chat.<locals>.connect',
          doc: 'Echoes messages.',
          image: plainImage,
          resources: { cpu: 0.25, memoryMiB: 256 },
          http: { route: '/', methods: [], authorized: true, domain: null },
          scaling: {
            workers: 3,
            concurrency: 10,
            maxPendingTasks: 0,
            keepWarmSeconds: 0,
            checkpointEnabled: false,
            autoscaler: singleContainer,
          },
          parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
          returns: { type: 'array', items: { type: 'string' }, 'x-svc-stream': true },
        },
      ],
    };
    assert.deepEqual(resolveApp(sampleManifest()), expected);
  });

  it('gives functions the platform default scaling', () => {
    const square = resolveApp(sampleManifest()).workloads[0];
    assert.equal(square?.kind, 'function');
    assert.deepEqual(square?.scaling, defaultScaling);
    assert.deepEqual(defaultScaling, {
      workers: 1,
      concurrency: 1,
      maxPendingTasks: 100,
      keepWarmSeconds: 60,
      checkpointEnabled: false,
      autoscaler: singleContainer,
    });
  });

  it("resolves a function's schedule (a cron expression trimmed, or a period) and leaves it null when the manifest has none", () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[0].options.schedule = { cron: ' 0 3 * * * ', timezone: 'Europe/Paris', overlap: false };
    assert.deepEqual(resolveApp(manifest).workloads[0]?.schedule, { cron: '0 3 * * *', timezone: 'Europe/Paris', overlap: false });
    manifest.workloads[0].options.schedule = { every: 300, overlap: true };
    assert.deepEqual(resolveApp(manifest).workloads[0]?.schedule, { every: 300, overlap: true });
    delete manifest.workloads[0].options.schedule;
    assert.equal(resolveApp(manifest).workloads[0]?.schedule, null);
    assert.equal('schedule' in (resolveApp(manifest).workloads[1] ?? {}), false, 'only functions have one');
  });

  it('carries timeout and retries of functions and endpoints into the spec, and no time-out for asgi', () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[0].options.timeout = 2.5;
    manifest.workloads[0].options.retries = { max_retries: 3, backoff_coefficient: 1.5, initial_delay: 0.5, max_delay: 10 };
    manifest.workloads[1].options.timeout = 30;
    const [square, greet, web] = resolveApp(manifest).workloads;
    assert.deepEqual(
      [square?.timeout, square?.retries],
      [2.5, { maxRetries: 3, backoffCoefficient: 1.5, initialDelay: 0.5, maxDelay: 10 }],
    );
    assert.deepEqual([greet?.timeout, greet?.retries], [30, undefined]);
    assert.deepEqual([web?.timeout, web?.retries], [undefined, undefined]);
  });

  it("carries a function's, an endpoint's and an asgi app's callback_url into the spec only when set, and refuses it on realtime", () => {
    const manifest = sampleManifest() as any;
    const url = 'https://example.com/hooks/svc';
    for (const index of [0, 1, 2]) manifest.workloads[index].options.callback_url = url;
    manifest.workloads[1].options.callback_url = null;
    const [square, greet, web] = resolveApp(manifest).workloads;
    assert.deepEqual([square?.callbackUrl, web?.callbackUrl], [url, url]);
    assert.equal('callbackUrl' in (greet ?? {}), false, 'null: left out');
    manifest.workloads[3].options.callback_url = url;
    assert.deepEqual(
      validateManifest(manifest).map((issue) => issue.path),
      ['workloads[3].options.callback_url'],
    );
  });

  it('shares one image object between the app and its workloads', () => {
    const spec = resolveApp(sampleManifest());
    assert.equal(spec.workloads[1]?.image, spec.images[0]);
  });

  it('freezes the whole model but not the manifest it came from', () => {
    const manifest = sampleManifest();
    const spec = resolveApp(manifest);
    const greet = spec.workloads[1] as any;
    for (const value of [
      spec,
      spec.images,
      spec.workloads,
      greet,
      greet.http.methods,
      greet.scaling.autoscaler,
      greet.parameters.properties.name,
    ]) {
      assert.ok(Object.isFrozen(value));
    }
    assert.throws(() => {
      greet.http.methods.push('GET');
    }, TypeError);
    assert.equal(Object.isFrozen(manifest.workloads[1]?.parameters), false);
    assert.deepEqual(manifest, sampleManifest());
  });
});

describe('parseManifest()', () => {
  it('validates and resolves in one step', () => {
    assert.deepEqual(parseManifest(sampleManifest()), resolveApp(sampleManifest()));
  });

  it('gives the same frozen spec for the same manifest text, and parses a changed one anew', () => {
    const first = parseManifest(sampleManifest());
    assert.equal(parseManifest(sampleManifest()), first, 'the second parse of the same text is the first one');
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.workloads[0]));
    const changed = sampleManifest() as any;
    changed.workloads[0].options.memory = '512Mi';
    assert.notEqual(parseManifest(changed), first);
    assert.equal(parseManifest(changed).workloads[0]!.resources.memoryMiB, 512);
    changed.workloads[0].options.memory = '2GB';
    assert.throws(() => parseManifest(changed), /manifest is invalid/, 'an invalid manifest is checked every time');
  });

  it('throws one manifest_invalid error listing every issue', () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[0].options.memory = '2GB';
    manifest.workloads[2].options.domain = 'Example.COM';
    manifest.images[0].python_version = 'three';
    let thrown: unknown;
    try {
      parseManifest(manifest);
    } catch (error) {
      thrown = error;
    }
    assert.ok(thrown instanceof SvcError);
    assert.equal(thrown.code, 'manifest_invalid');
    assert.equal(thrown.status, 422);
    const issues = (thrown.details as { issues: { path: string; message: string }[] }).issues;
    assert.deepEqual(
      issues.map((issue) => issue.path),
      ['images[0].python_version', 'workloads[0].options.memory', 'workloads[2].options.domain'],
    );
    const lines = thrown.message.split('\n');
    assert.equal(lines[0], 'The app manifest is invalid (3 problems):');
    assert.deepEqual(
      lines.slice(1),
      issues.map((issue) => `  - ${issue.path}: ${issue.message}`),
    );
  });

  it('names each bad timeout and retries value by its path, and refuses them where they do not belong', () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[0].options.timeout = 0.5;
    manifest.workloads[0].options.retries = { max_retries: 11, backoff_coefficient: 2, initial_delay: '1', extra: true };
    manifest.workloads[1].options.retries = 2;
    manifest.workloads[2].options.timeout = 10;
    const issues = validateManifest(manifest).map((issue) => `${issue.path}: ${issue.message}`);
    assert.deepEqual(issues, [
      'workloads[0].options.timeout: must be a number from 1 to 86400, got 0.5',
      'workloads[0].options.retries.extra: unknown key; allowed: max_retries, backoff_coefficient, initial_delay, max_delay',
      'workloads[0].options.retries.max_delay: missing key',
      'workloads[0].options.retries.max_retries: must be an integer from 0 to 10, got 11',
      'workloads[0].options.retries.initial_delay: must be a number, got string',
      'workloads[1].options.retries: unknown option for kind endpoint; allowed: cpu, memory, gpu, route, methods, workers, concurrency, autoscaler, buffer_containers, max_pending_tasks, checkpoint_enabled, authorized, domain, keep_warm, on_start, timeout, callback_url, cors',
      'workloads[2].options.timeout: unknown option for kind asgi; allowed: cpu, memory, gpu, workers, concurrent_requests, autoscaler, buffer_containers, max_pending_tasks, checkpoint_enabled, authorized, domain, keep_warm_seconds, openapi, on_start, callback_url',
    ]);
  });

  it('rejects values that are not manifests', () => {
    for (const value of [null, 'manifest', 42, []]) {
      assert.throws(
        () => parseManifest(value),
        (error: unknown) => error instanceof SvcError && error.code === 'manifest_invalid',
      );
    }
  });
});

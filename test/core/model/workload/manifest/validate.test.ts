import assert from 'node:assert/strict';
import { validateManifest } from '../../../../../core/model/workload/manifest/parse.js';
import { invalidCases } from './fixtures.js';
import { assertIssuesExactly } from './match-issues.js';
import { numpyImageId, sampleManifest } from './sample-manifest.js';

describe('validateManifest()', () => {
  it('accepts a manifest with one workload of every kind', () => {
    assert.deepEqual(validateManifest(sampleManifest()), []);
  });

  it('does not change the value it checks', () => {
    const manifest = sampleManifest();
    validateManifest(manifest);
    assert.deepEqual(manifest, sampleManifest());
    assert.equal(Object.isFrozen(manifest), false);
  });

  describe('with the invalid fixtures', () => {
    const cases = invalidCases();
    it('has at least six cases', () => assert.ok(cases.length >= 6, `only ${cases.length} cases`));
    for (const testCase of cases) {
      it(`reports exactly every issue of ${testCase.name}: ${testCase.description}`, () => {
        assertIssuesExactly(validateManifest(testCase.manifest), testCase.expected);
      });
    }
  });

  it('reports every bad option with its path, across workloads', () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[0].options.memory = '1Ti';
    manifest.workloads[1].options.workers = 65;
    manifest.workloads[3].options.keep_warm_seconds = 86_401;
    assertIssuesExactly(validateManifest(manifest), [
      { path: 'workloads[0].options.memory', message: 'got "1Ti"' },
      { path: 'workloads[1].options.workers', message: 'from 1 to 64, got 65' },
      { path: 'workloads[3].options.keep_warm_seconds', message: 'from 0 to 86400, got 86401' },
    ]);
  });

  it("checks a function's schedule with cron-parser, naming the field it refuses, and the time zone", () => {
    const manifest = sampleManifest() as any;
    const withSchedule = (schedule: unknown) => {
      manifest.workloads[0].options.schedule = schedule;
      return validateManifest(manifest);
    };
    assert.deepEqual(withSchedule({ cron: '*/15 9-17 * * mon-fri', timezone: 'Europe/Paris', overlap: false }), []);
    assert.deepEqual(withSchedule({ every: 1, overlap: true }), []);
    assert.deepEqual(withSchedule(null), []);
    assertIssuesExactly(withSchedule({ cron: '0 61 * * *', timezone: 'UTC', overlap: false }), [
      { path: 'workloads[0].options.schedule.cron', message: 'field 2 (hour) "61" is not valid' },
    ]);
    assertIssuesExactly(withSchedule({ cron: '0 3 * *', timezone: 'Mars/Base', overlap: 'no' }), [
      {
        path: 'workloads[0].options.schedule.cron',
        message: 'must have 5 fields (minute, hour, day of month, month, day of week), like "0 3 * * *", got 4',
      },
      {
        path: 'workloads[0].options.schedule.timezone',
        message: 'must be an IANA time zone name like "UTC" or "Europe/Paris", got "Mars/Base"',
      },
      { path: 'workloads[0].options.schedule.overlap', message: 'must be a boolean, got string' },
    ]);
    assertIssuesExactly(withSchedule({ cron: '0 0 31 2 *', timezone: 'UTC', overlap: false }), [
      { path: 'workloads[0].options.schedule.cron', message: 'never matches a time' },
    ]);
    assertIssuesExactly(withSchedule({ every: 0, overlap: false }), [
      { path: 'workloads[0].options.schedule.every', message: 'from 1 to 31622400, got 0' },
    ]);
    assertIssuesExactly(withSchedule('0 3 * * *'), [{ path: 'workloads[0].options.schedule', message: 'must be an object, got string' }]);
    manifest.workloads[1].options.schedule = null;
    assertIssuesExactly(withSchedule(null), [{ path: 'workloads[1].options.schedule', message: 'unknown option for kind endpoint' }]);
  });

  it('accepts the bounds of every range', () => {
    const manifest = sampleManifest() as any;
    Object.assign(manifest.workloads[1].options, {
      cpu: 0.125,
      memory: '64Mi',
      workers: 64,
      concurrency: 1000,
      max_pending_tasks: 100_000,
      keep_warm: 86_400,
      autoscaler: { max_containers: 1000, tasks_per_container: 10_000, min_containers: 1000 },
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      route: "/v1/items:batch/~a-b_c.d/@x/$!&'()*+,;=/",
    });
    Object.assign(manifest.workloads[2].options, { cpu: 64, memory: '256Gi', concurrent_requests: 1000, keep_warm_seconds: 86_400 });
    assert.deepEqual(validateManifest(manifest), []);
  });

  it('checks the image id against the SHA-256 of the image contents', () => {
    const manifest = sampleManifest() as any;
    manifest.images[1].python_packages = ['numpy==1.26'];
    assertIssuesExactly(validateManifest(manifest), [
      { path: 'images[1].id', message: `does not match the image's python_version and python_packages; expected img-` },
    ]);
    assert.ok(!validateManifest(manifest)[0]?.message.includes(numpyImageId));
  });

  it('rejects route segments "." and ".." and routes without a leading slash', () => {
    for (const route of ['/a/../b', '/./x', 'greet', '/a b', '/a#b']) {
      const manifest = sampleManifest() as any;
      manifest.workloads[1].options.route = route;
      const issues = validateManifest(manifest);
      assert.equal(issues.length, 1, `${route}: ${JSON.stringify(issues)}`);
      assert.equal(issues[0]?.path, 'workloads[1].options.route');
    }
  });

  it('rejects an empty methods list', () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[1].options.methods = [];
    assertIssuesExactly(validateManifest(manifest), [{ path: 'workloads[1].options.methods', message: 'must list at least one of GET' }]);
  });

  it('reports missing top-level keys without follow-up noise', () => {
    assertIssuesExactly(validateManifest({}), [
      { path: 'manifest_version', message: 'missing key' },
      { path: 'sdk_version', message: 'missing key' },
      { path: 'entry', message: 'missing key' },
      { path: 'app', message: 'missing key' },
      { path: 'images', message: 'missing key' },
      { path: 'workloads', message: 'missing key' },
    ]);
  });

  it('quotes keys that are not identifiers in paths', () => {
    const manifest = sampleManifest() as any;
    manifest.workloads[0].options['max memory'] = 1;
    assertIssuesExactly(validateManifest(manifest), [{ path: 'workloads[0].options["max memory"]', message: 'unknown option' }]);
  });
});

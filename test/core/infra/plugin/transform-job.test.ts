import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../../../core/model/paths.js';
import { createPluginHost } from '../../../../core/infra/plugin/host.js';
import { loadPlugins } from '../../../../core/infra/plugin/load.js';
import { hookKinds, type Plugin } from '../../../../core/infra/plugin/types.js';
import { compileJob } from '../../../../jobs/compile.js';
import { transformJob } from '../../../../core/infra/scheduler/nomad/transform-job.js';
import type { NomadJob } from '../../../../jobs/types.js';
import { jobContext, workload } from '../../../jobs/fixtures.js';

const context = { workspace: 'default', app: 'shop', stage: 'deployed' as const, workload: 'hello' };
const compiled = () => compileJob(workload('endpoint'), jobContext());
const plugin = (name: string, transform: (job: NomadJob) => NomadJob, extra: Partial<Plugin> = {}): Plugin => ({
  name,
  apiVersion: 1,
  hooks: { transformJob: transform },
  ...extra,
});

describe('the transformJob hook', () => {
  it('is a sequential hook the host accepts', () => {
    assert.equal(hookKinds.transformJob, 'sequential');
    assert.doesNotThrow(() => createPluginHost([plugin('acme:x', (job) => job)]));
  });

  it('chains plugins in order, each getting the previous job and the unit', async () => {
    const seen: unknown[] = [];
    const host = createPluginHost([
      plugin('acme:second', (job) => ({ ...job, Datacenters: [...job.Datacenters!, 'b'] })),
      plugin('acme:first', (job) => ({ ...job, Datacenters: ['a'] }), { enforce: 'pre' }),
      {
        name: 'acme:spy',
        apiVersion: 1,
        hooks: {
          transformJob: (job, ctx) => {
            seen.push(ctx);
            return job;
          },
        },
      },
    ]);
    const body = await transformJob(host, compiled(), context);
    assert.deepEqual(body.Job.Datacenters, ['a', 'b']);
    assert.deepEqual(seen, [context]);
    assert.equal(body.PreserveCounts, true);
  });

  it('leaves the compiled job alone when a plugin mutates its argument', async () => {
    const original = compiled();
    const host = createPluginHost([
      plugin('acme:mutator', (job) => {
        job.Priority = 99;
        return job;
      }),
    ]);
    const body = await transformJob(host, original, context);
    assert.equal(body.Job.Priority, 99);
    assert.equal(original.Job.Priority, 50);
  });

  it('loads the fixture plugin from a path and adds its constraints', async () => {
    const loaded = await loadPlugins(
      [{ module: path.join(packageRoot, 'test/fixtures/plugins/job-placement.mjs'), options: { datacenters: ['x1'], nodeClass: 'gpu' } }],
      { cwd: packageRoot },
    );
    const body = await transformJob(createPluginHost(loaded), compiled(), context);
    assert.deepEqual(body.Job.Datacenters, ['x1']);
    // After the compiler's own (a docker job's architecture), the plugin's two.
    assert.deepEqual(body.Job.Constraints, [
      { LTarget: '${attr.cpu.arch}', RTarget: 'amd64', Operand: '=' },
      { LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' },
      { LTarget: '${node.class}', RTarget: 'gpu', Operand: '=' },
    ]);
  });

  it('names the plugin whose job breaks a rule, not a later one, with every path', async () => {
    const later: string[] = [];
    const host = createPluginHost([
      plugin('acme:fine', (job) => job),
      plugin('acme:breaker', (job) => ({ ...job, Priority: 500, TaskGroups: [{ ...job.TaskGroups[0]!, Count: -1 }] })),
      plugin('acme:later', (job) => {
        later.push(job.ID);
        return job;
      }),
    ]);
    await assert.rejects(transformJob(host, compiled(), context), (error: Error & { code?: string; details?: { plugin: string } }) => {
      assert.equal(error.code, 'plugin_error');
      assert.equal(error.details?.plugin, 'acme:breaker');
      assert.match(
        error.message,
        /plugin "acme:breaker" failed in hook "transformJob": the job it returned for shop\/hello breaks \d+ rules/,
      );
      assert.match(error.message, /Job\.Priority: must be between 1 and 100/);
      assert.match(error.message, /Job\.TaskGroups\[0\]\.Count: must be 0 or more/);
      return true;
    });
    assert.deepEqual(later, []);
  });

  it('refuses a changed job ID, since svc finds its jobs by ID', async () => {
    const host = createPluginHost([plugin('acme:renamer', (job) => ({ ...job, ID: 'other' }))]);
    await assert.rejects(
      transformJob(host, compiled(), context),
      /acme:renamer.*Job\.ID: changed from "svc-default--shop--hello" to "other"/s,
    );
  });

  it('refuses a plugin that returns nothing, naming it', async () => {
    const host = createPluginHost([plugin('acme:silent', (() => undefined) as unknown as (job: NomadJob) => NomadJob)]);
    await assert.rejects(transformJob(host, compiled(), context), /plugin "acme:silent" failed in hook "transformJob": returned undefined/);
  });

  it('passes the job through unchanged without plugins', async () => {
    const body = compiled();
    assert.equal(await transformJob(createPluginHost([]), body, context), body);
  });
});

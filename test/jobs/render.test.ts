import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import jobsRender from '../../cli/commands/jobs-render.js';
import { isSvcError } from '../../core/model/errors.js';
import { examplesRoot, packageRoot } from '../../core/model/paths.js';
import type { NomadJobRegistration } from '../../jobs/types.js';
import { validateJob } from '../../jobs/validate.js';
import { capture } from '../cli/fixture.js';
import { assertGolden } from './fixtures.js';

const examples = readdirSync(examplesRoot, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .filter((name) => readdirSync(path.join(examplesRoot, name)).includes('app.py'))
  .sort();
const plugins = path.join(packageRoot, 'test', 'fixtures', 'plugins');

describe('svc jobs render', () => {
  for (const example of examples) {
    it(`prints valid registration bodies for every workload of examples/${example}`, async () => {
      const run = capture({ cwd: packageRoot });
      const result = await jobsRender(run.context, path.join('examples', example, 'app.py'));
      assert.notEqual(result, 1, run.stderr());
      const printed = JSON.parse(run.stdout()) as NomadJobRegistration[];
      assert.ok(printed.length > 0);
      for (const body of printed) assert.deepEqual(validateJob(body), [], body.Job.ID);
      assertGolden(`render/${example}`, printed);
    });
  }

  it('renders one workload with :<workload>, with the raw_exec driver and several datacenters', async () => {
    const run = capture({ cwd: packageRoot });
    await jobsRender(run.context, 'examples/quickstart/app.py:hello', {
      driver: 'raw_exec',
      datacenter: ['dc1,dc2', 'dc3'],
      region: 'eu',
      namespace: 'apps',
      stage: 'preview',
    });
    const [body, ...rest] = JSON.parse(run.stdout()) as NomadJobRegistration[];
    assert.equal(rest.length, 0);
    assert.equal(body!.Job.ID, 'svc-default--quickstart--hello--preview');
    assert.deepEqual(body!.Job.Datacenters, ['dc1', 'dc2', 'dc3']);
    assert.equal(body!.Job.Region, 'eu');
    assert.equal(body!.Job.Namespace, 'apps');
    assert.equal(body!.Job.TaskGroups[0]!.Tasks[0]!.Driver, 'raw_exec');
    assert.equal(body!.Job.TaskGroups[0]!.Tasks[0]!.Config.command, 'python3');
  });

  it("names docker images under the config's imageRegistry, or --registry, and refuses a registry that is not host[:port][/prefix]", async () => {
    const image = (printed: string) =>
      (JSON.parse(printed) as NomadJobRegistration[])[0]!.Job.TaskGroups[0]!.Tasks[0]!.Config.image as string;
    const fromConfig = capture({ cwd: packageRoot, env: { SVC_IMAGE_REGISTRY: 'http://registry.example.com:5000/team/svc' } });
    await jobsRender(fromConfig.context, 'examples/quickstart/app.py:hello', { driver: 'docker' });
    assert.match(image(fromConfig.stdout()), /^registry\.example\.com:5000\/team\/svc\/img-[0-9a-f]{16}:latest$/);
    const fromFlag = capture({ cwd: packageRoot, env: { SVC_IMAGE_REGISTRY: 'registry.example.com/svc' } });
    await jobsRender(fromFlag.context, 'examples/quickstart/app.py:hello', { driver: 'docker', registry: 'localhost:5001' });
    assert.match(image(fromFlag.stdout()), /^localhost:5001\/img-[0-9a-f]{16}:latest$/);
    const bad = capture({ cwd: packageRoot });
    await assert.rejects(
      jobsRender(bad.context, 'examples/quickstart/app.py:hello', { driver: 'docker', registry: 'Not A Host/x' }),
      /--registry: expected a registry host\[:port\] with an optional repository prefix.*got "Not A Host\/x"/,
    );
  });

  it('runs the transformJob hook of the plugins and prints its result', async () => {
    const run = capture({ cwd: packageRoot });
    await jobsRender(run.context, 'examples/quickstart/app.py:greet', { plugin: path.join(plugins, 'job-placement.mjs') });
    const [body] = JSON.parse(run.stdout()) as NomadJobRegistration[];
    assert.deepEqual(body!.Job.Datacenters, ['eu-west-1a', 'eu-west-1b']);
    assert.deepEqual(
      body!.Job.Constraints!.map((c) => c.LTarget),
      ['${attr.kernel.name}', '${node.class}'],
    );
    assert.equal(body!.Job.Meta!.placed_for, 'default-quickstart-deployed-greet');
    assertGolden('render/quickstart-greet-job-placement', body);
  });

  it('fails with a plugin_error naming the plugin and each broken path when a plugin breaks the job', async () => {
    const run = capture({ cwd: packageRoot });
    await assert.rejects(
      jobsRender(run.context, 'examples/quickstart/app.py:hello', { plugin: path.join(plugins, 'job-breaking.mjs') }),
      (error: unknown) => {
        assert.ok(isSvcError(error));
        assert.equal(error.code, 'plugin_error');
        assert.match(error.message, /^plugin "fixture:job-breaking" failed in hook "transformJob"/);
        assert.match(error.message, /Job\.TaskGroups\[0\]\.ShutdownDelay: durations are integer nanoseconds/);
        assert.match(error.message, /Job\.TaskGroups\[0\]\.restart: unknown key/);
        return true;
      },
    );
    assert.equal(run.stdout(), '');
  });

  it('exits 1 listing each path when a job breaks the rules (a cluster setting the compiler cannot fix)', async () => {
    const run = capture({ cwd: packageRoot });
    const code = await jobsRender(run.context, 'examples/quickstart/app.py:hello', { namespace: 'not a namespace', datacenter: 'dc1' });
    assert.equal(code, 1);
    assert.equal(run.stdout(), '');
    assert.match(run.stderr(), /hello \(svc-default--quickstart--hello\):\n {2}Job\.Namespace: must match/);
  });

  it('refuses an unknown driver and an unknown workload', async () => {
    const run = capture({ cwd: packageRoot });
    await assert.rejects(
      jobsRender(run.context, 'examples/quickstart/app.py', { driver: 'podman' }),
      /--driver must be one of docker, raw_exec, exec/,
    );
    await assert.rejects(jobsRender(run.context, 'examples/quickstart/app.py:nope'), /has no workload "nope"/);
  });
});

import assert from 'node:assert/strict';
import { compileJob } from '../../jobs/compile.js';
import { compilePeriodicJob } from '../../jobs/periodic.js';
import { validateJob } from '../../jobs/validate.js';
import { jobContext, workload } from './fixtures.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

function compiled(secrets?: string[]): Json {
  return JSON.parse(JSON.stringify(compileJob(workload('endpoint', secrets === undefined ? {} : { secrets }), jobContext())));
}
const task = (body: Json) => body.Job.TaskGroups[0].Tasks[0];

describe('the secrets template of a workload job', () => {
  it('is there only when the workload names secrets, and holds a reference, never a value', () => {
    assert.equal(task(compiled()).Templates, undefined);
    const body = compiled(['db', '@0']);
    const id = body.Job.ID;
    assert.deepEqual(task(body).Templates, [
      {
        EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/${id}" }}{{ range .Tuples }}{{ .K }}={{ .V | toJSON }}\n{{ end }}{{ end }}`,
        DestPath: 'secrets/svc-secrets.env',
        Envvars: true,
        Perms: '0400',
        ChangeMode: 'noop',
      },
    ]);
    assert.ok(!JSON.stringify(task(body).Env).includes('db'), 'not even the names go into Env');
    assert.deepEqual(validateJob(body), []);
  });

  it("is on a scheduled function's periodic job too, reading that job's Variable (its children read their parent's)", () => {
    const scheduled = (secrets: string[]) => workload('function', { schedule: { every: 60, overlap: false }, secrets });
    assert.equal(task(compilePeriodicJob(scheduled([]), jobContext())).Templates, undefined);
    const body: Json = JSON.parse(JSON.stringify(compilePeriodicJob(scheduled(['db']), jobContext())));
    assert.deepEqual(task(body).Templates, [
      {
        EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/${body.Job.ID}" }}{{ range .Tuples }}{{ .K }}={{ .V | toJSON }}\n{{ end }}{{ end }}`,
        DestPath: 'secrets/svc-secrets.env',
        Envvars: true,
        Perms: '0400',
        ChangeMode: 'noop',
      },
    ]);
    assert.ok(!JSON.stringify(task(body).Env).includes('db'));
    assert.deepEqual(validateJob(body), []);
  });

  const broken: [string, (template: Json, body: Json) => void, RegExp][] = [
    [
      "another job's Variable",
      (t) => (t.EmbeddedTmpl = t.EmbeddedTmpl.replace(/nomad\/jobs\/[^"]+/, 'nomad/jobs/other')),
      /may not read; svc writes its secrets to "nomad\/jobs\/svc-/,
    ],
    ['a path outside nomad/jobs', (t) => (t.EmbeddedTmpl = t.EmbeddedTmpl.replace(/nomad\/jobs\/[^"]+/, 'shared/db')), /may not read/],
    ['values rendered outside secrets/', (t) => (t.DestPath = 'local/env'), /private secrets\/ folder/],
    ['a destination escaping the task', (t) => (t.DestPath = '../x.env'), /inside the task's folders/],
    ['no destination', (t) => delete t.DestPath, /required/],
    ['an unknown change mode', (t) => (t.ChangeMode = 'reload'), /one of/],
    ['two templates on one file', (t, b) => task(b).Templates.push({ ...t }), /destination of another template/],
  ];
  for (const [rule, breakIt, message] of broken) {
    it(`refuses ${rule}`, () => {
      const body = compiled(['db']);
      breakIt(task(body).Templates[0], body);
      const issues = validateJob(body);
      assert.ok(
        issues.some((issue) => issue.path.startsWith('Job.TaskGroups[0].Tasks[0].Templates[') && message.test(issue.message)),
        JSON.stringify(issues),
      );
    });
  }
});

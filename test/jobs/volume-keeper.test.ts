/** The job of a CSI volume's keeper (jobs/volume-keeper.ts): valid by the strict validator on exec and docker, mounting the volume, its token from its Variable. */
import assert from 'node:assert/strict';
import { defaultClusterSettings } from '../../jobs/context.js';
import { keeperJobId, DNS_LABEL } from '../../jobs/names.js';
import { compileKeeperJob } from '../../jobs/volume-keeper.js';
import { formatIssues, validateJob } from '../../jobs/validate.js';

describe("a CSI volume's keeper job", () => {
  const cluster = { ...defaultClusterSettings, volumes: 'csi' as const, python: '/opt/svc/venv/bin/python', runtimePath: '/opt/svc/sdk' };

  it('runs the keeper on exec over the mounted CSI volume, on a dynamic port, with the token rendered from its Variable', () => {
    const body = compileKeeperJob({
      workspace: 'acme',
      volume: 'models',
      cluster: { ...cluster, driver: 'exec' },
      image: null,
      install: 'abc',
    });
    assert.deepEqual(validateJob(body), [], formatIssues(validateJob(body)));
    const { Job: job } = body;
    assert.equal(job.ID, 'svc--volume--acme--models');
    assert.deepEqual(job.Meta, { svc_volume: 'acme/models', svc_install: 'abc' });
    const group = job.TaskGroups[0]!;
    assert.equal(group.Count, 1);
    assert.deepEqual(group.Volumes, {
      data: {
        Name: 'data',
        Type: 'csi',
        Source: 'svc-acme--models',
        ReadOnly: false,
        AccessMode: 'multi-node-multi-writer',
        AttachmentMode: 'file-system',
      },
    });
    assert.deepEqual(group.Networks![0]!.DynamicPorts, [{ Label: 'keeper', Value: 0 }]);
    const task = group.Tasks[0]!;
    assert.equal(task.Driver, 'exec');
    assert.deepEqual(task.Config, {
      command: '/opt/svc/venv/bin/python',
      args: [
        '-m',
        'svc.runtime',
        'volume-keeper',
        '--root',
        '/svc-volume',
        '--host',
        '${NOMAD_IP_keeper}',
        '--port',
        '${NOMAD_PORT_keeper}',
        '--token-file',
        '${NOMAD_SECRETS_DIR}/keeper-token',
      ],
    });
    assert.equal(task.Env?.PYTHONPATH, '/opt/svc/sdk');
    assert.deepEqual(task.VolumeMounts, [{ Volume: 'data', Destination: '/svc-volume', ReadOnly: false }]);
    assert.deepEqual(task.Templates, [
      {
        EmbeddedTmpl: '{{ with nomadVar "nomad/jobs/svc--volume--acme--models" }}{{ .token }}{{ end }}',
        DestPath: 'secrets/keeper-token',
        Perms: '0400',
        ChangeMode: 'restart',
      },
    ]);
  });

  it("runs the image with svc's runtime on docker, listening inside the container", () => {
    const body = compileKeeperJob({
      workspace: 'acme',
      volume: 'models',
      cluster: { ...cluster, driver: 'docker', runtimePath: null },
      image: `registry.example.com/svc/img-keeper@sha256:${'a'.repeat(64)}`,
    });
    assert.deepEqual(validateJob(body), [], formatIssues(validateJob(body)));
    const task = body.Job.TaskGroups[0]!.Tasks[0]!;
    const config = task.Config as { image: string; ports: string[]; args: string[] };
    assert.match(config.image, /^registry\.example\.com\/svc\/img-keeper@sha256:a{64}$/);
    assert.deepEqual(config.ports, ['keeper']);
    assert.equal(config.args[config.args.indexOf('--host') + 1], '0.0.0.0');
    assert.equal(task.Env?.PYTHONPATH, undefined);
  });

  it('names keeper jobs apart from every unit job, within 63 characters', () => {
    const long = keeperJobId('a'.repeat(40), 'b'.repeat(40));
    assert.ok(long.length <= 63 && DNS_LABEL.test(long), long);
    assert.ok(long.startsWith('svc--volume--'));
    assert.notEqual(keeperJobId('a'.repeat(40), 'b'.repeat(40)), keeperJobId('a'.repeat(40), `${'b'.repeat(39)}c`));
  });
});

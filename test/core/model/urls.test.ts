import assert from 'node:assert/strict';
import type { DeploymentRef } from '../../../core/model/deployment-keys.js';
import { hostUrl, workloadHost, workloadPrefix, workloadUrl } from '../../../core/model/urls.js';

const deployed: DeploymentRef = { workspace: 'default', app: 'quickstart', stage: 'deployed' };
const preview: DeploymentRef = { ...deployed, stage: 'preview' };

describe('workloadPrefix()', () => {
  it('is /<workspace>/<app>/<workload> for a deployment', () => {
    assert.equal(workloadPrefix(deployed, 'greet'), '/default/quickstart/greet');
  });

  it('puts a preview beside it, with --preview on the app', () => {
    assert.equal(workloadPrefix(preview, 'greet'), '/default/quickstart--preview/greet');
  });
});

describe('workloadUrl()', () => {
  it('joins base URL, prefix and route', () => {
    assert.equal(workloadUrl('http://127.0.0.1:7420', deployed, 'greet', '/greet'), 'http://127.0.0.1:7420/default/quickstart/greet/greet');
  });

  it('adds nothing for the root route', () => {
    assert.equal(workloadUrl('http://127.0.0.1:7420', preview, 'hello', '/'), 'http://127.0.0.1:7420/default/quickstart--preview/hello');
  });

  it('drops trailing slashes of the base URL', () => {
    assert.equal(workloadUrl('https://svc.example.com//', deployed, 'greet', '/a'), 'https://svc.example.com/default/quickstart/greet/a');
  });
});

describe('workloadHost()', () => {
  it('is <app>-<workload>.<base domain>, lower case, with - for _', () => {
    assert.deepEqual(workloadHost(deployed, 'greet', 'svc.example.com'), { host: 'quickstart-greet.svc.example.com' });
    assert.deepEqual(workloadHost({ ...deployed, app: 'My_App' }, 'Say_Hi', 'localhost'), { host: 'my-app-say-hi.localhost' });
  });

  it('marks previews and other workspaces, so they never share a host with the default deployment', () => {
    assert.deepEqual(workloadHost(preview, 'greet', 'localhost'), { host: 'quickstart-greet--preview.localhost' });
    assert.deepEqual(workloadHost({ ...preview, workspace: 'acme' }, 'greet', 'localhost'), {
      host: 'quickstart-greet--preview--acme.localhost',
    });
  });

  it('never gives deployments of two workspaces, or a preview and a deployment, the same host', () => {
    const refs: [DeploymentRef, string][] = [
      [{ workspace: 'x', app: 'a', stage: 'deployed' }, 'b'],
      [{ workspace: 'default', app: 'a', stage: 'deployed' }, 'b__x'],
      [{ workspace: 'default', app: 'a', stage: 'deployed' }, 'b--x'],
      [{ workspace: 'default', app: 'a', stage: 'preview' }, 'b'],
      [{ workspace: 'default', app: 'a', stage: 'deployed' }, 'b__preview'],
      [{ workspace: 'preview', app: 'a', stage: 'deployed' }, 'b'],
      [{ workspace: 'x', app: 'a', stage: 'preview' }, 'b'],
      [{ workspace: 'preview--x', app: 'a', stage: 'deployed' }, 'b'],
      [{ workspace: 'y', app: 'a', stage: 'deployed' }, 'b--preview--x'],
    ];
    const hosts = refs.flatMap(([ref, workload]) => {
      const host = workloadHost(ref, workload, 'localhost');
      return 'host' in host ? [host.host] : [];
    });
    assert.deepEqual(hosts, ['a-b--x.localhost', 'a-b--preview.localhost', 'a-b--preview--x.localhost']);
    const refused = workloadHost({ workspace: 'default', app: 'a', stage: 'deployed' }, 'b__x', 'localhost');
    assert.ok('problem' in refused && /would contain "--"/.test(refused.problem), JSON.stringify(refused));
  });

  it('says why when the name makes no DNS label', () => {
    const long = workloadHost({ ...deployed, app: 'a'.repeat(40) }, 'b'.repeat(30), 'localhost');
    assert.ok('problem' in long && /71 characters long \(DNS allows 63\)/.test(long.problem), JSON.stringify(long));
    const trailing = workloadHost(deployed, 'greet_', 'localhost');
    assert.ok(
      'problem' in trailing && /quickstart-greet-\.localhost is not a valid DNS label/.test(trailing.problem),
      JSON.stringify(trailing),
    );
  });
});

describe('hostUrl()', () => {
  it('keeps the scheme and port of the base URL', () => {
    assert.equal(hostUrl('http://127.0.0.1:7420', 'quickstart-greet.localhost', '/'), 'http://quickstart-greet.localhost:7420');
    assert.equal(
      hostUrl('https://svc.example.com', 'quickstart-greet.svc.example.com', '/greet'),
      'https://quickstart-greet.svc.example.com/greet',
    );
  });
});

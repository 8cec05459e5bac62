import assert from 'node:assert/strict';
import type { DeploymentRef } from '../../../core/deployments/keys.js';
import { workloadPrefix, workloadUrl } from '../../../core/gateway/urls.js';

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

import assert from 'node:assert/strict';
import { API_PREFIX } from '../../../../core/http/api/index.js';
import { checkName, nameProblem, RESERVED_WORKSPACE_NAMES } from '../../../../core/model/names.js';
import { Workspaces } from '../../../../core/services/workspaces/workspaces.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';

describe('reserved workspace names', () => {
  it('reserve every first path segment the platform serves, and "preview"', () => {
    for (const name of [API_PREFIX.split('/')[1]!, 'device', 'login', 'dashboard', 'static', 'preview']) {
      assert.ok(RESERVED_WORKSPACE_NAMES.includes(name), name);
    }
  });

  it('are refused for workspaces with a message that says why', async () => {
    assert.match(nameProblem('api')!, /^is reserved: svc's own pages and API share the URL space with workspace paths \(reserved: api, /);
    assert.throws(() => checkName('workspace', 'login'), { code: 'name_invalid', message: /^the workspace name "login" is reserved/ });
    await assert.rejects(new Workspaces(createMemoryStateStore()).create('dashboard'), { code: 'name_invalid' });
  });

  it('stay valid names for apps and workloads, whose URLs never start with them', () => {
    assert.equal(nameProblem('api', 'app'), null);
    assert.equal(checkName('workload', 'preview'), 'preview');
  });
});

import assert from 'node:assert/strict';
import { apiRoutes } from '../../../../core/http/api/index.js';
import { declarationProblems, declaredParameters, pathParameterNames } from '../../../../core/http/api/declared-parameters.js';
import { declaredResponses } from '../../../../core/http/api/openapi.js';
import { APP } from '../../../../core/http/api/openapi/shared.js';
import type { ApiRoute } from '../../../../core/http/api/types.js';
import { errorCodes, isSvcError } from '../../../../core/model/errors.js';
import { startApiPlatform, type ApiFixture } from './platform.js';

const name = (route: ApiRoute) => `${route.method} ${route.path}`;

describe('declared path and query parameters', () => {
  it('are declared for every :parameter of every route, and only for those', () => {
    for (const route of apiRoutes) assert.deepEqual(declarationProblems(route), [], name(route));
    assert.ok(apiRoutes.filter((route) => pathParameterNames(route).length > 0).length > 20, 'most routes have path parameters');
  });

  it('find a route whose path has a parameter it does not declare, or whose parameter has no refusal', () => {
    const route = apiRoutes.find((r) => r.path === '/apps/:app/deployments/:workload')!;
    const undeclared = { ...route, openapi: { ...route.openapi, parameters: [APP] } };
    assert.deepEqual(declarationProblems(undeclared), [
      'DELETE /apps/:app/deployments/:workload: the path parameter workload is not declared',
    ]);
    const { refusal: _, ...unrefused } = APP;
    const silent = { ...route, path: '/apps/:app', openapi: { ...route.openapi, parameters: [unrefused] } };
    assert.deepEqual(declarationProblems(silent), ['DELETE /apps/:app: the path parameter app can be refused, but declares no refusal']);
    const extra = { ...route, path: '/apps', openapi: { ...route.openapi, parameters: [APP] } };
    assert.deepEqual(declarationProblems(extra), ['DELETE /apps: declares the path parameter app, which its path lacks']);
  });

  it("answer with an error of the declared code, whose status the route declares, for a value every schema refuses ('!')", async () => {
    for (const route of apiRoutes) {
      for (const parameter of declaredParameters(route)) {
        if (parameter.refusal === undefined) continue;
        const where = `${name(route)} ${parameter.name}`;
        const status = errorCodes[parameter.refusal.code].status;
        assert.ok(declaredResponses(route)[status], `${where}: its route declares no ${status} for its refusal`);
        const params = Object.fromEntries(pathParameterNames(route).map((p) => [p, 'ok']));
        const error = await parameter.refusal.refuse('!', { params, workspace: 'default' });
        assert.ok(isSvcError(error) && error.code === parameter.refusal.code, where);
      }
    }
  });

  describe('over HTTP', () => {
    let f: ApiFixture;
    before(async () => (f = await startApiPlatform()));
    after(async () => f?.platform.close());
    afterEach(() => assert.deepEqual(f.reports, [], 'no unexpected errors'));

    const error = async (method: string, path: string, json?: unknown) => {
      const answer = await f.call(method, path, { token: f.owner, ...(json === undefined ? {} : { json }) });
      return { status: answer.status, ...answer.json.error };
    };

    it('answer a bad app or workload name 422 name_invalid, saying how it breaks the rule', async () => {
      assert.deepEqual(await error('GET', '/api/v1/apps/Shop'), {
        status: 422,
        code: 'name_invalid',
        message: 'the app name "Shop" has the upper-case letter "S"; names are lower case; try "shop"',
        hint: 'A app name is a lowercase DNS label: 1 to 63 characters from a-z, 0-9 and "-", not starting or ending with "-", without "--", e.g. "acme-prod".',
        details: { kind: 'app', name: 'Shop' },
      });
      const workload = await error('GET', '/api/v1/apps/shop/deployments/say--hi/logs');
      assert.equal(workload.status, 422);
      assert.equal(
        workload.message,
        'the workload name "say--hi" must not contain "--": svc uses it in URLs to mark previews and workspaces; try "say-hi"',
      );
      assert.deepEqual(workload.details, { kind: 'workload', name: 'say--hi' });
      // The app first, as the path reads; then the workload; a good name goes on to the handler (no such app).
      assert.equal((await error('DELETE', '/api/v1/apps/-x/deployments/Y')).message, 'the app name "-x" must not start with "-"; try "x"');
      assert.deepEqual(await error('GET', '/api/v1/apps/shop'), {
        status: 404,
        code: 'not_found',
        message: 'no app shop in workspace default.',
        hint: 'GET /api/v1/apps lists the apps of your workspace.',
      });
    });

    it("answer each route's other parameters in its own words", async () => {
      assert.deepEqual(await error('GET', '/api/v1/runs/run-1'), {
        status: 400,
        code: 'bad_request',
        message: '"run-1" is not a run id; run ids look like run-0123456789abcdef.',
        hint: 'GET /api/v1/runs lists the runs of your workspace.',
      });
      // Every parameter's shape before anything is looked up: the app shop does not exist, the id is refused first.
      assert.deepEqual(await error('GET', '/api/v1/apps/shop/runs/sched-1'), {
        status: 400,
        code: 'bad_request',
        message: '"sched-1" is not a scheduled run id (sched-<13 digits>-<6 hex>).',
        hint: 'List the runs with svc app runs shop.',
      });
      assert.deepEqual(await error('DELETE', '/api/v1/tokens/tok_1'), {
        status: 400,
        code: 'bad_request',
        message: '"tok_1" is not a token id ("tok_" and 12 hex digits, as listed)',
        details: { field: 'id' },
      });
      assert.deepEqual(await error('GET', '/api/v1/bundles/ABC'), {
        status: 400,
        code: 'bad_request',
        message: 'the path names the bundle "ABC", which is not a sha256 (64 lowercase hex digits).',
        hint: 'The sha256 of the tar.gz, as `python3 -m svc.bundle` prints it (or `sha256sum bundle.tar.gz`).',
      });
      assert.deepEqual(await error('DELETE', '/api/v1/secrets/DB'), {
        status: 422,
        code: 'name_invalid',
        message: 'the secret name "DB" has the upper-case letter "D"; names are lower case; try "db".',
        details: { kind: 'secret', name: 'DB' },
      });
      assert.deepEqual(await error('DELETE', '/api/v1/members/bob'), {
        status: 404,
        code: 'not_found',
        message: 'workspace default has no member "bob".',
        details: { account: 'bob' },
      });
      const workspace = await error('POST', '/api/v1/workspaces/login/token', {});
      assert.equal(workspace.status, 422);
      assert.match(workspace.message, /^the workspace name "login" is reserved/);
    });

    it('are checked after the token and the body, before the handler', async () => {
      const anonymous = await f.call('GET', '/api/v1/apps/Shop');
      assert.equal(anonymous.status, 401);
      const badBody = await error('POST', '/api/v1/apps/Shop/deployments', { bundle: 'x' });
      assert.equal(badBody.status, 400);
      assert.equal(badBody.message, 'the field "manifest" is required.');
    });
  });
});

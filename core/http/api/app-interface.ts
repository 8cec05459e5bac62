/**
 * `GET /api/v1/apps/:app/interface`: what a client generator needs of a
 * deployed app (`svc app export`): each workload's kind, docstring, URLs,
 * route, methods, whether it needs a token, and the JSON Schemas of its
 * arguments and return value, with the versions they come from; for an ASGI
 * app, the operations of the OpenAPI description read at its deploy. Only the
 * deployed stage: a generated client calls the deployment, never a preview.
 * Another workspace's app is `not_found`, like one that does not exist.
 */
import { normalizeApi } from '../../services/app-api/normalize.js';
import type { DeployedWorkload, Deployment } from '../../services/deployments/types.js';
import { workloadPrefix } from '../../model/urls.js';
import type { AppInterface, InterfaceWorkload } from '../../infra/plugin/types.js';
import type { Workload } from '../../model/workload/types.js';
import { requireApp } from './apps.js';
import { answer, APP, BAD_QUERY, error, NAME_INVALID, ref } from './openapi/shared.js';
import type { ApiRoute } from './types.js';

export const appInterfaceRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps/:app/interface',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getAppInterface',
      summary:
        "What a client generator needs of the deployed app (svc app export): each workload's kind, docstring, URLs, route, methods, access, argument and return JSON Schemas, status, the operations of an ASGI app's OpenAPI description read at its deploy, and the versions they come from.",
      parameters: [APP],
      responses: {
        200: answer('The interface of the deployed app.', ref('AppInterface')),
        400: BAD_QUERY,
        404: error(
          "`not_found`: the caller's workspace has no such deployed app (a preview is not enough; an app of another workspace is not found either).",
        ),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: describeInterface(requireApp(params, principal, services)) };
    },
  },
];

/** The interface of a deployed app: its workloads by name, each from the spec of the version it runs. */
export function describeInterface(deployment: Deployment): AppInterface {
  const specs = new Map(deployment.spec.workloads.map((workload) => [workload.name, workload]));
  const described = deployment.workloads
    .flatMap((deployed) => {
      const spec = specs.get(deployed.name);
      return spec === undefined ? [] : [{ deployed, spec }];
    })
    .sort((a, b) => (a.deployed.name < b.deployed.name ? -1 : a.deployed.name > b.deployed.name ? 1 : 0));
  return {
    app: deployment.ref.app,
    generatedFrom: { versions: Object.fromEntries(described.map(({ deployed }) => [deployed.name, deployed.version])) },
    workloads: described.map(({ deployed, spec }) => describeWorkload(deployment, deployed, spec)),
  };
}

function describeWorkload(deployment: Deployment, deployed: DeployedWorkload, spec: Workload): InterfaceWorkload {
  const route = spec.http?.route ?? null;
  const served = deployed.url !== null && route !== null;
  return {
    name: deployed.name,
    kind: deployed.kind,
    doc: spec.doc,
    url: deployed.url,
    path: served ? `${workloadPrefix(deployment.ref, deployed.name)}${route === '/' ? '' : route}` : null,
    hostUrl: deployed.hostUrl,
    methods: deployed.kind === 'endpoint' ? [...deployed.methods] : [],
    route,
    authorized: deployed.authorized,
    parameters: spec.parameters,
    returns: spec.returns,
    status: deployed.status,
    ...(deployed.kind === 'function' && spec.class !== undefined ? { methodsOfClass: spec.class.methods.map((m) => m.name) } : {}),
    ...(spec.resources.gpu ? { gpu: { models: [...spec.resources.gpu.models], count: spec.resources.gpu.count } } : {}),
    // Normalized when asked: the document is kept as the app served it.
    api: deployed.api?.capture ? normalizeApi(deployed.api.capture).api : null,
  };
}

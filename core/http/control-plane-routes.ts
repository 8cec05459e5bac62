/**
 * The control plane's HTTP face: the API's routes, the bundle artifact URLs
 * and the dashboard's pages as one middleware. It sits above both the API
 * and the dashboard (the dashboard's pages read the API's views), so that
 * neither imports the other's entry.
 */
import type { Middleware } from 'koa';
import type { GatewayState } from '../traffic/gateway/types.js';
import { dashboardRoutes } from './dashboard/index.js';
import { bundleArtifactMiddleware } from './api/bundle-artifact.js';
import { apiRoutes } from './api/index.js';
import { apiRouter } from './api/router.js';
import type { ApiServices } from './api/types.js';

export function controlPlaneRoutes(services: ApiServices): Middleware<GatewayState> {
  const api = apiRouter(apiRoutes, services);
  const pages = dashboardRoutes(services);
  // Before the router, which refuses query strings: an artifact URL's signature is in its query.
  const artifacts = bundleArtifactMiddleware(services);
  return (ctx, next) => artifacts(ctx, () => api(ctx, () => pages(ctx, next)));
}

/**
 * The control-plane API: `/api/v1/…`, one file per resource.
 * control-plane-routes.ts mounts it, with the dashboard, in the gateway's
 * `platformRoutes` slot.
 */
import { appDeploymentRoutes } from './app-deployments.js';
import { appInterfaceRoutes } from './app-interface.js';
import { appRunRoutes } from './app-runs.js';
import { appRoutes } from './apps.js';
import { appHistoryRoutes } from './app-history.js';
import { containerRoutes } from './containers.js';
import { usageRoutes } from './usage.js';
import { bundleArtifactRoutes } from './bundle-artifact.js';
import { bundleRoutes } from './bundles.js';
import { deploymentLogRoutes } from './deployment-logs.js';
import { deploymentRoutes } from './deployments.js';
import { deviceRoutes } from './device.js';
import { domainRoutes } from './domains.js';
import { exampleRoutes } from './examples.js';
import { memberRoutes } from './members.js';
import { previewRoutes } from './previews.js';
import { mapRoutes } from './maps.js';
import { runRoutes } from './runs.js';
import { callRoutes } from './calls.js';
import { callGroupRoutes } from './call-groups.js';
import { appCallRoutes } from './app-calls.js';
import { callbackSecretRoutes } from './callback-secret.js';
import { secretRoutes } from './secrets.js';
import { volumeRoutes } from './volumes.js';
import { signInRoutes } from './sign-in.js';
import { tokenRoutes } from './tokens.js';
import type { ApiRoute } from './types.js';
import { whoamiRoutes } from './whoami.js';
import { workspaceRoutes } from './workspace.js';
import { quotaRoutes } from './quotas.js';

export { API_PREFIX, type ApiServices } from './types.js';
export { DEFAULT_MAX_BUNDLE_BYTES } from './upload.js';
export { openControlPlane, type ControlPlane, type StateKind } from './control-plane.js';

/** Every route of the API, in the order docs/openapi.json lists their paths (`npm run openapi` writes it from these). */
export const apiRoutes: readonly ApiRoute[] = [
  ...whoamiRoutes,
  ...tokenRoutes,
  ...workspaceRoutes,
  ...quotaRoutes,
  ...callbackSecretRoutes,
  ...domainRoutes,
  ...secretRoutes,
  ...volumeRoutes,
  ...memberRoutes,
  ...deviceRoutes,
  ...signInRoutes,
  ...deploymentRoutes,
  ...bundleRoutes,
  ...bundleArtifactRoutes,
  ...appRoutes,
  ...appHistoryRoutes,
  ...containerRoutes,
  ...usageRoutes,
  ...appInterfaceRoutes,
  ...appRunRoutes,
  ...appDeploymentRoutes,
  ...deploymentLogRoutes,
  ...previewRoutes,
  ...runRoutes,
  ...callRoutes,
  ...callGroupRoutes,
  ...appCallRoutes,
  ...mapRoutes,
  ...exampleRoutes,
];

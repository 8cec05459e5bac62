/** The OpenAPI facts of the routes in deployment-logs.ts, for docs/openapi.json (core/api/openapi.ts). */
import { APP, BAD_QUERY, LOG_LINES, NAME_INVALID, NO_SUCH_DEPLOYMENT, UNAUTHORIZED, WORKLOAD } from './shared.js';
import type { Operation } from './types.js';

export const getDeploymentLogs: Operation = {
  operationId: 'getDeploymentLogs',
  summary: 'The log lines kept of one deployment (across its versions, with build lines); with Accept: text/event-stream, followed as Server-Sent Events.',
  parameters: [APP, WORKLOAD],
  responses: {
    200: {
      description: 'The kept lines, oldest first (JSON); or, with `Accept: text/event-stream`, an event stream: `event: log` per line (data: a LogLine), `: ping` comments every 15 s, `event: end` when the deployment is deleted (or svc stops, or the client falls more than 1 MiB behind: reason `lagging`).',
      content: LOG_LINES,
    },
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    404: NO_SUCH_DEPLOYMENT,
    422: NAME_INVALID,
  },
};

/**
 * `GET /api/v1/apps/:app/deployments/:workload/logs`: the lines kept of one
 * deployment (across its versions, with image build lines), as JSON; with
 * `Accept: text/event-stream`, followed: the kept lines, then each new one,
 * as Server-Sent Events (`event: log`), a comment every 15 s to keep proxies
 * from cutting an idle stream, and `event: end` when the deployment is
 * deleted (or svc stops). A client that goes unsubscribes at once: Koa
 * destroys the stream when the response closes. A client that stays but does
 * not read falls behind: once more than `SSE_MAX_LAG_BYTES` of new lines wait
 * for it, it gets `event: end` (reason `lagging`) and is unsubscribed, so a
 * slow reader never holds more than its bound in memory.
 */
import { Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';
import type { DeploymentLogKey, DeploymentLogLine } from '../../infra/logs/deployment-logs.js';
import { appRef, requireApp } from './apps.js';
import type { IncomingHttpHeaders } from 'node:http';
import { APP, BAD_QUERY, LOG_LINES, NAME_INVALID, NO_SUCH_DEPLOYMENT, WORKLOAD } from './openapi/shared.js';
import type { ApiAnswer, ApiRoute, ApiServices } from './types.js';

/** How often a follower gets a comment line when nothing is printed. */
export const SSE_PING_MS = 15_000;

/** How many bytes of new lines may wait for a follower (beyond the kept lines it was sent) before it is cut off. */
export const SSE_MAX_LAG_BYTES = 1024 * 1024;

export const deploymentLogRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps/:app/deployments/:workload/logs',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getDeploymentLogs',
      summary:
        'The log lines kept of one deployment (across its versions, with build lines); with Accept: text/event-stream, followed as Server-Sent Events.',
      parameters: [APP, WORKLOAD],
      responses: {
        200: {
          description:
            'The kept lines, oldest first (JSON); or, with `Accept: text/event-stream`, an event stream: `event: log` per line (data: a LogLine), `: ping` comments every 15 s, `event: end` when the deployment is deleted (or svc stops, or the client falls more than 1 MiB behind: reason `lagging`).',
          content: LOG_LINES,
        },
        400: BAD_QUERY,
        404: NO_SUCH_DEPLOYMENT,
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal, headers }, services) {
      const ref = appRef(params, principal);
      const workload = params.workload!;
      const deployment = requireApp(params, principal, services);
      if (!deployment.workloads.some((w) => w.name === workload)) {
        throw new SvcError('not_found', `the app ${ref.app} has no deployment ${workload}.`, {
          hint: `GET /api/v1/apps/${ref.app} lists its deployments.`,
        });
      }
      return logsAnswer(services, { ...ref, workload }, headers);
    },
  },
];

/** The kept lines of `key` as JSON, or (with `Accept: text/event-stream`) followed as Server-Sent Events. */
/** The lines of `key` (those `only` keeps: one container's), as JSON or followed as server-sent events. */
export function logsAnswer(
  services: ApiServices,
  key: DeploymentLogKey,
  headers: IncomingHttpHeaders,
  only: (line: DeploymentLogLine) => boolean = () => true,
): ApiAnswer {
  if (!wantsEventStream(headers.accept)) return { status: 200, body: { lines: services.logs.lines(key).filter(only) } };
  return {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' },
    body: follow(services, key, only),
  };
}

function wantsEventStream(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => part.split(';', 1)[0]!.trim().toLowerCase() === 'text/event-stream');
}

const logEvent = (line: DeploymentLogLine) => `event: log\ndata: ${JSON.stringify(line)}\n\n`;

/** The SSE stream: subscribed before the kept lines are read, so no line falls between the two. */
function follow(services: ApiServices, key: DeploymentLogKey, only: (line: DeploymentLogLine) => boolean): Readable {
  const stream = new Readable({ read() {} });
  let ended = false;
  // Set once the kept lines are queued: what may wait for the client, at most.
  let maxBuffered = Infinity;
  const finish = (reason: string) => {
    if (ended) return;
    ended = true;
    unsubscribe();
    stream.push(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    stream.push(null);
  };
  const unsubscribe = services.logs.subscribe(key, {
    line: (line) => {
      if (ended || !only(line)) return;
      // The client does not read (push ignores backpressure): stop before the queue grows without bound.
      if (stream.readableLength > maxBuffered) return finish('lagging');
      stream.push(logEvent(line));
    },
    end: finish,
  });
  const ping = setInterval(() => void (ended || stream.push(': ping\n\n')), SSE_PING_MS);
  ping.unref();
  const stop = () => {
    clearInterval(ping);
    unsubscribe();
  };
  stream.on('close', stop);
  stream.on('end', stop);
  // A comment first: the client sees the stream open even when nothing is kept yet.
  stream.push(': following\n\n');
  for (const line of services.logs.lines(key)) if (only(line)) stream.push(logEvent(line));
  maxBuffered = stream.readableLength + SSE_MAX_LAG_BYTES;
  return stream;
}

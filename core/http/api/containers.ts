/**
 * The containers of the caller's workspace (`svc container list | logs | stop`): each running container of
 * its deployments and previews, with its workload, version, state, age, requests in flight, and the CPU and
 * memory it uses (from its cgroup, where svc limits it), and the GPUs it holds or waits for. Another workspace's container id answers as an
 * unknown one.
 */
import type { ContainerGpu } from '../../infra/scheduler/types.js';
import { SvcError } from '../../model/errors.js';
import { NAME_PATTERN } from '../../model/names.js';
import type { DeployedWorkload, Deployment } from '../../services/deployments/types.js';
import { logsAnswer } from './deployment-logs.js';
import { answer, error, json, listOf, ref } from './openapi/shared.js';
import { roleOf } from './role.js';
import type { Parameter } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';
import { COMMAND_WORDS } from '../../infra/scheduler/types.js';

export interface ContainerView {
  readonly id: string;
  /** `<app>/<workload>`. */
  readonly deployment: string;
  readonly app: string;
  readonly workload: string;
  readonly stage: string;
  readonly version: number;
  readonly state: string;
  readonly startedAt: string;
  readonly ageSeconds: number;
  readonly inFlight: number;
  /** CPU seconds used so far; null where nothing accounts them (no cgroup, or Nomad). */
  readonly cpuSeconds: number | null;
  /** Memory held now, in bytes; null where svc cannot tell. */
  readonly memoryBytes: number | null;
  /** The GPUs it holds or waits for; null: none asked, or the scheduler hands them out itself (Nomad). */
  readonly gpu: ContainerGpu | null;
}

/** A container found by id among the workspace's deployments. */
interface Found {
  readonly view: ContainerView;
  readonly deployment: Deployment;
  readonly workload: DeployedWorkload;
}

const CONTAINER: Parameter = {
  name: 'container',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
  description: 'The container id, as `svc container list` shows it.',
  refusal: {
    code: 'bad_request',
    refuse: (value) => new SvcError('bad_request', `${JSON.stringify(value)} is not a container id: see svc container list.`),
  },
};

const NO_SUCH_CONTAINER = error(
  "`not_found`: no running container of the caller's workspace has this id (another workspace's is not found either).",
);

function containersOf(services: ApiServices, workspace: string, now: number): Found[] {
  const deployments = services.deployments.list().filter((d) => d.ref.workspace === workspace);
  return deployments.flatMap((deployment) =>
    deployment.workloads.flatMap((workload) => {
      if (workload.unit === null) return [];
      const status = services.autoscaler.status(workload.unit);
      const usage = services.containers.usage?.(workload.unit) ?? new Map();
      return (status?.containers ?? []).map((container) => {
        const used = usage.get(container.id);
        const view: ContainerView = {
          id: container.id,
          deployment: `${deployment.ref.app}/${workload.name}`,
          app: deployment.ref.app,
          workload: workload.name,
          stage: deployment.ref.stage,
          version: workload.version,
          state: container.state,
          startedAt: container.startedAt.toISOString(),
          ageSeconds: Math.max(0, Math.round((now - container.startedAt.getTime()) / 1000)),
          inFlight: container.inFlight,
          cpuSeconds: used?.cpuSeconds ?? null,
          memoryBytes: used?.memoryBytes ?? null,
          gpu: container.gpu ?? null,
        };
        return { view, deployment, workload };
      });
    }),
  );
}

/** The container of the workspace with this id; `not_found` otherwise (another workspace's too). */
export function requireContainer(services: ApiServices, workspace: string, id: string): Found {
  const found = containersOf(services, workspace, Date.now()).find((c) => c.view.id === id);
  if (found === undefined) {
    throw new SvcError('not_found', `no running container ${id} in workspace ${workspace}.`, {
      hint: 'svc container list shows the running ones.',
    });
  }
  return found;
}

export const containerRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/containers',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listContainers',
      summary: "The running containers of the caller's workspace (`?app=` for one app's), with what each uses now.",
      parameters: [
        {
          name: 'app',
          in: 'query',
          required: false,
          schema: { type: 'string', pattern: NAME_PATTERN },
          description: 'Only the containers of this app.',
          refusal: {
            code: 'bad_request',
            refuse: (value) => new SvcError('bad_request', `app=${JSON.stringify(value)} is not an app name (a lowercase DNS label).`),
          },
        },
      ],
      responses: {
        200: answer('The containers.', listOf('containers', ref('Container'))),
        400: error('`bad_request`: `app` is not an app name.'),
      },
    },
    async handle({ principal, query }, services) {
      const app = query.get('app');
      // Given but empty is no app name either (the parameter's pattern says so; an empty value never reaches it).
      if (app === '') throw new SvcError('bad_request', 'app="" is not an app name (a lowercase DNS label); leave it out for every app.');
      const found = containersOf(services, principal.workspace, Date.now()).map((c) => c.view);
      const containers = found
        .filter((c) => app === null || c.app === app)
        .sort((a, b) => a.deployment.localeCompare(b.deployment) || a.startedAt.localeCompare(b.startedAt));
      return { status: 200, body: { containers } };
    },
  },
  {
    method: 'GET',
    path: '/containers/:container/logs',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getContainerLogs',
      summary: 'The log lines kept of one container, or with `Accept: text/event-stream` those and each new one as it comes.',
      pathParameters: [CONTAINER],
      responses: {
        200: answer('The lines.', listOf('lines', ref('LogLine'))),
        400: error('`bad_request`: not a container id.'),
        404: NO_SUCH_CONTAINER,
      },
    },
    async handle({ params, principal, headers }, services) {
      const { deployment, workload, view } = requireContainer(services, principal.workspace, params.container!);
      return logsAnswer(services, { ...deployment.ref, workload: workload.name }, headers, (line) => line.container === view.id);
    },
  },
  {
    method: 'POST',
    path: '/containers/:container/exec',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'execInContainer',
      summary:
        "Runs a command inside a running container (its cgroup, volumes, environment and secrets, its code's folder), for owners of the workspace; recorded in the deployment's log. Answers when it ends, with its exit code and output (each stream up to 1 MiB).",
      pathParameters: [CONTAINER],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['command'],
          additionalProperties: false,
          properties: {
            command: {
              type: 'array',
              minItems: 1,
              maxItems: COMMAND_WORDS.max,
              items: { type: 'string', maxLength: COMMAND_WORDS.maxChars },
              description: 'The argv: ["ps", "aux"].',
            },
            timeoutSeconds: { type: 'integer', minimum: 1, maximum: 600, description: 'Killed past it (default 60).' },
          },
        }),
      },
      responses: {
        200: answer('How it ended.', ref('ExecOutcome')),
        400: error('`bad_request`: no command, or a command that could not start.'),
        403: error('`forbidden`: exec is for owners of the workspace.'),
        404: NO_SUCH_CONTAINER,
        409: error('`conflict`: the container is not running (starting or stopping).'),
      },
    },
    async handle({ params, principal, body }, services) {
      if ((await roleOf(principal, services.controlPlane.accounts)) !== 'owner') {
        throw new SvcError('forbidden', 'running commands in containers is for owners of the workspace.', {
          hint: 'Ask an owner of the workspace, who sees everything a container holds (its secrets too).',
        });
      }
      const { deployment, workload, view } = requireContainer(services, principal.workspace, params.container!);
      if (services.containers.exec === undefined) {
        throw new SvcError('bad_request', 'this scheduler cannot run commands in containers.');
      }
      const { command, timeoutSeconds } = body as { command: string[]; timeoutSeconds?: number };
      // Who looked inside, when and how: in the deployment's log, where the workspace reads it.
      services.logs.add(
        { ...deployment.ref, workload: workload.name },
        {
          time: new Date().toISOString(),
          container: view.id,
          stream: 'system',
          text: `exec by ${principal.subject}: ${JSON.stringify(command)}`,
        },
      );
      const outcome = await services.containers.exec(workload.unit!, view.id, { argv: command, timeoutMs: (timeoutSeconds ?? 60) * 1000 });
      return { status: 200, body: outcome };
    },
  },
  {
    method: 'POST',
    path: '/containers/:container/stop',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'stopContainer',
      summary:
        'Stops one container (its requests in flight finish first); the autoscaler starts another if its deployment still wants one, as after a crash.',
      pathParameters: [CONTAINER],
      responses: {
        200: answer('The container as it was.', ref('Container')),
        400: error('`bad_request`: not a container id.'),
        404: NO_SUCH_CONTAINER,
      },
    },
    async handle({ params, principal }, services) {
      const { view, workload } = requireContainer(services, principal.workspace, params.container!);
      await services.containers.stop(workload.unit!, view.id);
      return { status: 200, body: view };
    },
  },
];

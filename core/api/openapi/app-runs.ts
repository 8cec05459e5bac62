/** The OpenAPI facts of the routes in app-runs.ts (scheduled runs), for docs/openapi.json (core/api/openapi.ts). */
import { answer, APP, BAD_QUERY, error, holding, NAME_INVALID, ref, UNAUTHORIZED } from './shared.js';
import type { Operation, Parameter, Schema } from './types.js';

const RUN_ID: Parameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^sched-[0-9]{13}-[0-9a-f]{6}$' }, description: "The scheduled run's id." };
const NO_APP = error("`not_found`: the caller's workspace has no such deployed app (an app of another workspace is not found either).");

export const listScheduledRuns: Operation = {
  operationId: 'listScheduledRuns',
  summary: "The app's schedules (each scheduled function, its schedule and its next tick) and its scheduled runs, newest first, without their logs: the last 100 of each function are kept.",
  parameters: [APP],
  responses: { 200: answer('The schedules and the runs.', ref('ScheduledRunList')), 400: BAD_QUERY, 401: UNAUTHORIZED, 404: NO_APP, 422: NAME_INVALID },
};

export const getScheduledRun: Operation = {
  operationId: 'getScheduledRun',
  summary: 'One scheduled run with its logs: what the function printed and, when it failed, its traceback (the last 64 KiB).',
  parameters: [APP, RUN_ID],
  responses: {
    200: answer('The run.', holding('run', ref('ScheduledRun'))),
    400: error('`bad_request`: the id is not a scheduled run id (`sched-`, 13 digits, `-`, 6 hex digits), or a query parameter.'),
    401: UNAUTHORIZED,
    404: error('`not_found`: no such app, or the app has no such run (only the last 100 runs of each function are kept).'),
    422: NAME_INVALID,
  },
};

const summaryProperties: Record<string, Schema> = {
  id: { type: 'string', pattern: '^sched-[0-9]{13}-[0-9a-f]{6}$', description: '`sched-`, the tick in milliseconds since the epoch (13 digits), 6 hex digits: sorts by tick.' },
  app: { type: 'string' },
  function: { type: 'string' },
  scheduledAt: { type: 'string', format: 'date-time', description: 'The tick the run is for.' },
  startedAt: { type: ['string', 'null'], format: 'date-time', description: 'Null for a skipped tick.' },
  endedAt: { type: ['string', 'null'], format: 'date-time', description: 'Null while running and for a skipped tick.' },
  status: {
    type: 'string',
    enum: ['running', 'succeeded', 'failed', 'skipped'],
    description: '`running`; `succeeded`: the function returned; `failed`: it raised, its container died, or it could not start (`error`); `skipped`: the tick came while the previous run still ran (no overlap asked for).',
  },
  durationMs: { type: ['integer', 'null'], description: 'From start to end; null unless ended.' },
  error: {
    type: ['object', 'null'],
    required: ['code', 'message'],
    additionalProperties: false,
    properties: {
      code: { type: ['string', 'null'], description: "svc's error code (`worker_crashed`, `image_build_failed`, …); null for an exception the function raised." },
      message: { type: 'string', description: 'The exception (`ValueError: …`) or the error message.' },
    },
    description: 'Why it failed; null unless `failed`.',
  },
};

const scheduleSchema: Schema = {
  description: 'A 5-field cron expression in an IANA time zone, or a period in seconds; `overlap`: a tick may start a run while the previous one runs.',
  oneOf: [
    { type: 'object', required: ['cron', 'timezone', 'overlap'], additionalProperties: false, properties: { cron: { type: 'string' }, timezone: { type: 'string' }, overlap: { type: 'boolean' } } },
    { type: 'object', required: ['every', 'overlap'], additionalProperties: false, properties: { every: { type: 'integer', minimum: 1 }, overlap: { type: 'boolean' } } },
  ],
};

export const scheduledRunSchemas: Record<string, Schema> = {
  ScheduledRunSummary: { type: 'object', required: Object.keys(summaryProperties), additionalProperties: false, properties: summaryProperties },
  ScheduledRun: {
    type: 'object',
    required: [...Object.keys(summaryProperties), 'logs'],
    additionalProperties: false,
    properties: {
      ...summaryProperties,
      logs: {
        type: 'array',
        description: 'What the run printed, then the traceback of an exception (the last 64 KiB).',
        items: {
          type: 'object',
          required: ['time', 'stream', 'text'],
          additionalProperties: false,
          properties: { time: { type: 'string', format: 'date-time' }, stream: { type: 'string', enum: ['stdout', 'stderr', 'system'] }, text: { type: 'string' } },
        },
      },
    },
  },
  ScheduledRunList: {
    type: 'object',
    required: ['schedules', 'runs'],
    additionalProperties: false,
    properties: {
      schedules: {
        type: 'array',
        description: 'The scheduled functions of the app as deployed.',
        items: {
          type: 'object',
          required: ['function', 'schedule', 'description', 'nextRunAt'],
          additionalProperties: false,
          properties: {
            function: { type: 'string' },
            schedule: scheduleSchema,
            description: { type: 'string', description: 'The schedule in words: `cron 0 3 * * * (UTC)`, `every 300s`.' },
            nextRunAt: { type: ['string', 'null'], format: 'date-time', description: 'The next tick; null while the app is paused.' },
          },
        },
      },
      runs: { type: 'array', items: ref('ScheduledRunSummary') },
    },
  },
};

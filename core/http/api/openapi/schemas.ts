/**
 * `components.schemas` of docs/openapi.json: the shapes the routes take and
 * answer, named so that the routes' facts can point at them (`ref('Token')`).
 */
import { CALL_ID_SOURCE, CALL_STATUSES, GROUP_ID_SOURCE } from '../../../services/calls/types.js';
import { DEFAULT_IDLE_TIMEOUT_SECONDS, IDLE_TIMEOUT_RANGE, RUN_ID_SOURCE } from '../../../services/runs/types.js';
import { RUN_ID_PATTERN as SCHEDULED_RUN_ID } from '../../../model/schedule-keys.js';
import { MAP_ID_SOURCE } from '../../../services/maps/types.js';
import { MAX_BATCH_INPUTS, MAX_GROUP_INPUTS } from '../../../services/calls/call-groups.js';
import { MAX_CLASS_PARAMETERS, MAX_PARAMETER_CHARS } from '../../../model/workload/class-parameters.js';
import { listOf, ref } from './shared.js';
import type { Schema } from './types.js';
import { USAGE_FIGURES } from '../../../services/usage/figures.js';

/** A call group's batch of inputs, and whether more follow (`POST /call-groups`, `POST …/inputs`). */
const BATCH_INPUTS: Schema = {
  type: 'array',
  maxItems: MAX_BATCH_INPUTS,
  items: { type: 'string', contentEncoding: 'base64' },
  description: `Pickled calls, \`pickle.dumps({"args": [...], "kwargs": {...}})\`, base64: at most ${MAX_BATCH_INPUTS} a batch, and ${MAX_GROUP_INPUTS} a group.`,
};
/** A usage row's cost at the operator's prices (`usagePrices`), to a millionth; absent without prices. */
const COST: Schema = {
  type: 'number',
  minimum: 0,
  description: "What it cost at the operator's prices, in `currency`; absent without prices.",
};
/** A usage row's figures (core/services/usage/figures.ts), each described. */
const USAGE_FIGURE_SCHEMAS: Record<(typeof USAGE_FIGURES)[number], Schema> = {
  cpuSeconds: {
    type: 'number',
    minimum: 0,
    description: 'CPU seconds its containers used (their cgroups; on Nomad, an estimate from allocation stats).',
  },
  memoryGiBSeconds: { type: 'number', minimum: 0, description: 'Memory held, in GiB, times the seconds it was held.' },
  memoryReservedGiBSeconds: {
    type: 'number',
    minimum: 0,
    description: "Memory its running containers reserved (the workload's `memory=`), in GiB-seconds.",
  },
  requests: {
    type: 'integer',
    minimum: 0,
    description: "Requests its URL answered (the gateway's count; calls of functions are not requests).",
  },
  calls: { type: 'integer', minimum: 0, description: 'Calls its functions answered (`.remote()`, `.map()`, spawned calls).' },
  bytesIn: { type: 'integer', minimum: 0, description: 'Bytes those requests brought from their clients, head and body.' },
  bytesOut: { type: 'integer', minimum: 0, description: 'Bytes their answers sent to the clients, head and body.' },
  gpuSeconds: { type: 'number', minimum: 0, description: 'GPUs its containers held (`gpu=`), times the seconds they held them.' },
};
const MORE_INPUTS: Schema = {
  type: 'boolean',
  description: 'More batches follow (default false: this one is the last, and the group is closed).',
};

/** What a deploy and a preview are made of: the manifest and the uploaded bundle. */
const MANIFEST_AND_BUNDLE = {
  manifest: {
    type: 'object',
    description: 'A Manifest v1 (docs/manifest.md), as `python3 -m svc.manifest` prints it. Its app name must be the one in the path.',
  },
  bundle: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The sha256 of a bundle the workspace uploaded.' },
} as const;

/** Of a deploy, a preview and a run: the values of the app's `svc.Secret.from_dict` secrets, sent beside the manifest (never in it). */
const INLINE_SECRETS = {
  type: ['array', 'null'],
  items: { type: 'object', additionalProperties: { type: 'string' } },
  description: 'KEY: value objects; a workload that names `@<i>` in its secrets gets the i-th.',
} as const;

/** The values of an `@app.cls` class's parameters: a run, a spawned call or a group of them per set of values. */
const CLASS_PARAMETERS = {
  type: ['object', 'null'],
  maxProperties: MAX_CLASS_PARAMETERS,
  additionalProperties: {
    oneOf: [
      { type: 'string', maxLength: MAX_PARAMETER_CHARS },
      { type: 'integer' },
      { type: 'boolean' },
      {
        type: 'object',
        required: ['base64'],
        additionalProperties: false,
        properties: { base64: { type: 'string', maxLength: MAX_PARAMETER_CHARS } },
      },
    ],
  },
  description:
    'For an @app.cls class: its svc.parameter() values by name (str, int, bool, or bytes as {"base64": ...}); missing ones take their defaults. Each distinct set of values runs in containers of its own. Refused for a function.',
} as const;

/** How long a preview or a run may stay idle. */
const IDLE_TIMEOUT = {
  type: ['integer', 'null'],
  minimum: IDLE_TIMEOUT_RANGE.min,
  maximum: IDLE_TIMEOUT_RANGE.max,
  default: DEFAULT_IDLE_TIMEOUT_SECONDS,
  description: `Seconds of idleness after which it ends by itself; ${DEFAULT_IDLE_TIMEOUT_SECONDS} when missing or null.`,
} as const;

/** The input a map frame belongs to. */
const INPUT_INDEX = { type: 'integer', minimum: 0, description: "The input's index." } as const;

/** What a token is, in the list (with its last use) and when created (with its secret). */
const TOKEN_FIELDS = {
  id: { type: 'string', pattern: '^tok_[0-9a-f]{12}$' },
  name: { type: ['string', 'null'] },
  workspace: { type: 'string' },
  subject: { type: 'string', description: 'Who the token acts as (an account id).' },
  createdBy: { type: 'string' },
  createdAt: { type: 'string', format: 'date-time' },
  expiresAt: { type: ['string', 'null'], format: 'date-time' },
} as const;
const TOKEN_REQUIRED = Object.keys(TOKEN_FIELDS);

/** What an app is (App), and a preview too (Preview). */
const APP_FIELDS = {
  name: { type: 'string' },
  paused: { type: 'boolean' },
  deployments: { type: 'array', items: ref('AppDeployment') },
  warnings: { type: 'array', items: { type: 'string' } },
  createdAt: { type: 'string', format: 'date-time' },
  updatedAt: { type: 'string', format: 'date-time' },
};

const summaryProperties: Record<string, Schema> = {
  id: {
    type: 'string',
    pattern: SCHEDULED_RUN_ID.source,
    description: '`sched-`, the tick in milliseconds since the epoch (13 digits), 6 hex digits: sorts by tick.',
  },
  app: { type: 'string' },
  function: { type: 'string' },
  scheduledAt: { type: 'string', format: 'date-time', description: 'The tick the run is for.' },
  startedAt: { type: ['string', 'null'], format: 'date-time', description: 'Null for a skipped tick.' },
  endedAt: { type: ['string', 'null'], format: 'date-time', description: 'Null while running and for a skipped tick.' },
  status: {
    type: 'string',
    enum: ['running', 'succeeded', 'failed', 'skipped'],
    description:
      '`running`; `succeeded`: the function returned; `failed`: it raised, its container died, or it could not start (`error`); `skipped`: the tick came while the previous run still ran (no overlap asked for).',
  },
  durationMs: { type: ['integer', 'null'], description: 'From start to end; null unless ended.' },
  error: {
    type: ['object', 'null'],
    required: ['code', 'message'],
    additionalProperties: false,
    properties: {
      code: {
        type: ['string', 'null'],
        description: "svc's error code (`worker_crashed`, `image_build_failed`, …); null for an exception the function raised.",
      },
      message: { type: 'string', description: 'The exception (`ValueError: …`) or the error message.' },
    },
    description: 'Why it failed; null unless `failed`.',
  },
};

const scheduleSchema: Schema = {
  description:
    'A 5-field cron expression in an IANA time zone, or a period in seconds; `overlap`: a tick may start a run while the previous one runs.',
  oneOf: [
    {
      type: 'object',
      required: ['cron', 'timezone', 'overlap'],
      additionalProperties: false,
      properties: { cron: { type: 'string' }, timezone: { type: 'string' }, overlap: { type: 'boolean' } },
    },
    {
      type: 'object',
      required: ['every', 'overlap'],
      additionalProperties: false,
      properties: { every: { type: 'integer', minimum: 1 }, overlap: { type: 'boolean' } },
    },
  ],
};

/** Scheduled runs (app-runs.ts). */
const scheduledRunSchemas: Record<string, Schema> = {
  ScheduledRunSummary: {
    type: 'object',
    required: Object.keys(summaryProperties),
    additionalProperties: false,
    properties: summaryProperties,
  },
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
          properties: {
            time: {
              type: 'string',
              anyOf: [{ format: 'date-time' }, { const: '' }],
              description: 'When the line was printed; empty for a run on Nomad, whose task logs carry no time.',
            },
            stream: { type: 'string', enum: ['stdout', 'stderr', 'system'] },
            text: { type: 'string' },
          },
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

export const schemas: Readonly<Record<string, Schema>> = {
  Error: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', description: 'A code of docs/errors.md.' },
          message: { type: 'string' },
          hint: { type: 'string' },
          details: {},
        },
      },
    },
  },
  OAuthError: {
    type: 'object',
    required: ['error', 'error_description'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'string',
        enum: [
          'authorization_pending',
          'slow_down',
          'access_denied',
          'expired_token',
          'invalid_grant',
          'invalid_request',
          'unsupported_grant_type',
        ],
      },
      error_description: { type: 'string' },
    },
  },
  WhoAmI: {
    type: 'object',
    required: ['workspace', 'subject', 'tokenId', 'role'],
    additionalProperties: false,
    properties: {
      workspace: { type: 'string' },
      subject: { type: 'string' },
      tokenId: { type: ['string', 'null'] },
      role: { type: 'string', enum: ['owner', 'member'] },
    },
  },
  TokenInput: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: ['string', 'null'], minLength: 1, maxLength: 100, description: 'No control characters.' },
      expiresAt: { type: ['string', 'null'], format: 'date-time', description: 'With a time zone; in the future, at most one year away.' },
    },
  },
  Token: {
    type: 'object',
    required: [...TOKEN_REQUIRED, 'lastUsedAt'],
    additionalProperties: false,
    properties: {
      ...TOKEN_FIELDS,
      lastUsedAt: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'Its last accepted use, to the minute on other replicas; null when never used.',
      },
    },
  },
  CreatedToken: {
    type: 'object',
    required: [...TOKEN_REQUIRED, 'secret'],
    additionalProperties: false,
    properties: { ...TOKEN_FIELDS, secret: { type: 'string', pattern: '^svc_[0-9A-Za-z]{40}$', description: 'Shown once.' } },
  },
  Plan: { type: 'string', enum: ['free', 'team', 'business'] },
  Role: { type: 'string', enum: ['owner', 'member'] },
  WorkspaceList: {
    type: 'object',
    required: ['current', 'workspaces'],
    additionalProperties: false,
    properties: {
      current: { type: 'string', description: 'The workspace the token acts in.' },
      workspaces: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'plan', 'createdAt', 'role'],
          additionalProperties: false,
          properties: {
            name: { type: 'string' },
            plan: ref('Plan'),
            createdAt: { type: 'string', format: 'date-time' },
            role: ref('Role'),
          },
        },
      },
    },
  },
  Member: {
    type: 'object',
    required: ['id', 'name', 'role', 'joined', 'invitedBy', 'createdAt'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: '^acc_[0-9a-f]{16}$' },
      name: { type: 'string' },
      role: ref('Role'),
      joined: { type: 'boolean', description: 'False while the invitation is open (never signed in).' },
      invitedBy: { type: ['string', 'null'], description: 'The account that invited them.' },
      createdAt: { type: 'string', format: 'date-time' },
    },
  },
  Invitation: {
    type: 'object',
    required: ['member', 'path', 'expiresAt'],
    additionalProperties: false,
    properties: {
      member: ref('Member'),
      path: { type: 'string', description: "`/login#<secret>`: append it to the server's URL. Works once, within 7 days; shown once." },
      expiresAt: { type: 'string', format: 'date-time' },
    },
  },
  PlanRecord: {
    type: 'object',
    required: ['workspace', 'plan', 'changes', 'operator'],
    additionalProperties: false,
    properties: {
      workspace: { type: 'string' },
      plan: ref('Plan'),
      operator: { type: 'boolean', description: "Whether the caller is the server's operator (who may change plans)." },
      changes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['workspace', 'from', 'to', 'by', 'at'],
          additionalProperties: false,
          properties: {
            workspace: { type: 'string' },
            from: ref('Plan'),
            to: ref('Plan'),
            by: { type: 'string', description: "The operator's account id." },
            at: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
  },
  DomainView: {
    type: 'object',
    required: ['domain', 'workspace', 'app', 'workload', 'status', 'record', 'claimedAt', 'verifiedAt', 'reason'],
    additionalProperties: false,
    properties: {
      domain: { type: 'string' },
      workspace: { type: 'string' },
      app: { type: 'string' },
      workload: { type: 'string' },
      status: { type: 'string', enum: ['pending', 'verified', 'suspended'] },
      record: {
        type: 'object',
        required: ['type', 'name', 'value'],
        additionalProperties: false,
        description: 'The DNS record to publish for verification.',
        properties: { type: { type: 'string', enum: ['TXT'] }, name: { type: 'string' }, value: { type: 'string' } },
      },
      claimedAt: { type: 'string', format: 'date-time' },
      verifiedAt: { type: ['string', 'null'], format: 'date-time' },
      reason: { type: ['string', 'null'], description: 'Why it is not served, when it is not.' },
    },
  },
  Volume: {
    type: 'object',
    required: ['name', 'createdAt', 'bytes', 'maxBytes', 'mountedBy'],
    additionalProperties: false,
    description: "A volume of the caller's workspace: a folder of files kept on the server (docs/volumes.md).",
    properties: {
      name: { type: 'string' },
      createdAt: { type: 'string', format: 'date-time' },
      bytes: {
        type: ['integer', 'null'],
        minimum: 0,
        description: 'What its files hold now; null when they cannot be read now (`bytesError` says why).',
      },
      bytesError: {
        type: 'string',
        description: 'Why `bytes` is null: a CSI volume whose keeper does not answer (yet). Absent when `bytes` is a number.',
      },
      maxBytes: { type: 'integer', minimum: 0, description: 'The most it may hold (`volumeMaxBytes`).' },
      mountedBy: {
        type: 'array',
        items: { type: 'string' },
        description: 'The deployed workloads (`<app>/<workload>`) and remote runs (`run <id> (<function>)`) that mount it.',
      },
    },
  },
  VolumeEntry: {
    type: 'object',
    required: ['path', 'type', 'size', 'modifiedAt'],
    additionalProperties: false,
    properties: {
      path: { type: 'string', description: 'From the volume\'s root, "/"-separated.' },
      type: {
        type: 'string',
        enum: ['file', 'dir', 'link'],
        description: '`link`: a symbolic link a container made (never followed outside the volume).',
      },
      size: { type: 'integer', minimum: 0, description: 'Bytes, for a file; 0 otherwise.' },
      modifiedAt: { type: 'string', format: 'date-time' },
    },
  },
  VolumeEntryPage: {
    type: 'object',
    required: ['entries', 'next'],
    additionalProperties: false,
    properties: {
      entries: { type: 'array', items: { $ref: '#/components/schemas/VolumeEntry' } },
      next: {
        type: ['string', 'null'],
        description: "The `after` of the next page (the last entry's path); null once this page is the last.",
      },
    },
  },
  Secret: {
    type: 'object',
    required: ['name', 'keys', 'createdAt', 'createdBy', 'updatedAt', 'updatedBy'],
    additionalProperties: false,
    description: 'A secret without its values: no answer of the API holds one.',
    properties: {
      name: { type: 'string' },
      keys: { type: 'array', items: { type: 'string' }, description: 'Its keys (environment variable names), sorted.' },
      createdAt: { type: 'string', format: 'date-time' },
      createdBy: { type: ['string', 'null'], description: 'The account that created it.' },
      updatedAt: { type: 'string', format: 'date-time' },
      updatedBy: { type: ['string', 'null'], description: 'The account that last changed it.' },
    },
  },
  SecretInput: {
    type: 'object',
    required: ['name', 'values'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', description: 'A lowercase DNS label.' },
      values: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description:
          'KEY: value pairs; keys are environment variable names (not SVC_* nor PYTHONPATH, PATH…), at most 100, values at most 32 KiB each and 128 KiB in all.',
      },
      replace: { type: ['boolean', 'null'], description: 'Overwrite a secret of the same name (its keys become exactly these).' },
    },
  },
  SecretUpdate: {
    type: 'object',
    additionalProperties: false,
    properties: {
      values: { type: 'object', additionalProperties: { type: 'string' }, description: 'Keys to set (added or changed).' },
      remove: { type: 'array', items: { type: 'string' }, description: 'Keys to remove.' },
      restart: {
        type: ['boolean', 'null'],
        description: 'Replace the containers of every deployed workload that uses the secret now, so that they start with the new values.',
      },
    },
  },
  Workspace: {
    type: 'object',
    required: ['name', 'plan', 'createdAt'],
    additionalProperties: false,
    properties: { name: { type: 'string' }, plan: ref('Plan'), createdAt: { type: 'string', format: 'date-time' } },
  },
  DeviceCodeInput: {
    type: 'object',
    properties: {
      client_name: {
        type: ['string', 'null'],
        minLength: 1,
        maxLength: 80,
        description: 'Shown to the approver; left out or null: `svc CLI`.',
      },
      client_id: { type: 'string', description: 'Accepted and ignored.' },
    },
  },
  DeviceAuthorization: {
    type: 'object',
    required: ['device_code', 'user_code', 'verification_uri', 'verification_uri_complete', 'expires_in', 'interval'],
    additionalProperties: false,
    properties: {
      device_code: { type: 'string' },
      user_code: { type: 'string', pattern: '^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$' },
      verification_uri: { type: 'string', format: 'uri' },
      verification_uri_complete: { type: 'string', format: 'uri' },
      expires_in: { type: 'integer' },
      interval: { type: 'integer' },
    },
  },
  DeviceTokenInput: {
    type: 'object',
    required: ['grant_type', 'device_code'],
    properties: { grant_type: { type: 'string', const: 'urn:ietf:params:oauth:grant-type:device_code' }, device_code: { type: 'string' } },
  },
  DeviceToken: {
    type: 'object',
    required: ['access_token', 'token_type', 'workspace', 'token_id'],
    additionalProperties: false,
    properties: {
      access_token: { type: 'string' },
      token_type: { type: 'string', const: 'Bearer' },
      workspace: { type: 'string' },
      token_id: { type: 'string' },
    },
  },
  UserCodeInput: {
    type: 'object',
    required: ['user_code'],
    additionalProperties: false,
    properties: { user_code: { type: 'string', description: 'Any case, with or without the hyphen.' } },
  },
  DeviceDecision: {
    type: 'object',
    required: ['user_code', 'client_name', 'status', 'workspace'],
    additionalProperties: false,
    properties: {
      user_code: { type: 'string' },
      client_name: { type: 'string' },
      status: { type: 'string', enum: ['approved', 'denied'] },
      workspace: { type: 'string' },
    },
  },
  SignIn: {
    type: 'object',
    required: [...TOKEN_REQUIRED, 'secret', 'account'],
    additionalProperties: false,
    properties: {
      ...TOKEN_FIELDS,
      secret: { type: 'string' },
      account: {
        type: 'object',
        required: ['id', 'name', 'role'],
        additionalProperties: false,
        properties: { id: { type: 'string' }, name: { type: 'string' }, role: { type: 'string', enum: ['owner', 'member'] } },
      },
    },
  },
  Deployment: {
    type: 'object',
    required: ['name', 'app', 'workload', 'stage', 'kind', 'urls', 'state', 'containers', 'inFlight', 'queued', 'createdAt', 'scaling'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', description: '<app>/<workload>' },
      app: { type: 'string' },
      workload: { type: 'string' },
      stage: { type: 'string', enum: ['preview', 'deployed'] },
      kind: { type: 'string', enum: ['function', 'endpoint', 'asgi', 'realtime'] },
      urls: ref('WorkloadUrls'),
      state: { type: 'string', enum: ['ready', 'idle', 'starting', 'crash_loop', 'not_served'] },
      containers: ref('ContainerCounts'),
      inFlight: { type: 'integer' },
      queued: { type: 'integer' },
      createdAt: { type: 'string', format: 'date-time' },
      scaling: {
        type: ['object', 'null'],
        required: ['min', 'max', 'buffer', 'byHand'],
        additionalProperties: false,
        description: 'Its bounds now; `byHand` when set with `svc deployment scale` since its deploy. Null for functions.',
        properties: { min: { type: 'integer' }, max: { type: 'integer' }, buffer: { type: 'integer' }, byHand: { type: 'boolean' } },
      },
    },
  },
  WorkloadUrls: {
    type: 'object',
    required: ['path', 'host'],
    additionalProperties: false,
    properties: { path: { type: ['string', 'null'] }, host: { type: ['string', 'null'] } },
  },
  ContainerCounts: {
    type: 'object',
    required: ['ready', 'starting', 'desired'],
    additionalProperties: false,
    properties: { ready: { type: 'integer' }, starting: { type: 'integer' }, desired: { type: 'integer' } },
  },
  BundleUpload: {
    type: 'object',
    required: ['sha256', 'size', 'created'],
    additionalProperties: false,
    properties: {
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      size: { type: 'integer', description: 'Bytes of the tar.gz.' },
      created: { type: 'boolean', description: 'False when the workspace had this bundle already.' },
    },
  },
  DeployInput: {
    type: 'object',
    required: ['manifest', 'bundle'],
    additionalProperties: false,
    properties: {
      ...MANIFEST_AND_BUNDLE,
      workload: { type: ['string', 'null'], description: 'Deploy only this workload; the others keep their version.' },
      prune: { type: ['boolean', 'null'], description: 'Remove the deployments the manifest no longer has (whole-app deploys only).' },
      inlineSecrets: INLINE_SECRETS,
    },
  },
  AppVersion: {
    type: 'object',
    required: ['version', 'bundleSha256', 'createdAt', 'createdBy'],
    additionalProperties: false,
    properties: {
      version: { type: 'integer' },
      bundleSha256: { type: ['string', 'null'] },
      createdAt: { type: 'string', format: 'date-time' },
      createdBy: { type: ['string', 'null'] },
    },
  },
  AppDeployment: {
    type: 'object',
    required: ['name', 'workload', 'kind', 'status', 'urls', 'version', 'versions', 'containers', 'api'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', description: '`<app>/<workload>`.' },
      workload: { type: 'string' },
      kind: { type: 'string', enum: ['endpoint', 'asgi', 'realtime', 'function'] },
      status: { type: 'string', enum: ['running', 'paused', 'stopped', 'failed', 'not_served'] },
      urls: ref('WorkloadUrls'),
      version: { type: 'integer', description: 'The version it runs.' },
      versions: { type: 'array', items: ref('AppVersion'), description: 'The versions kept (the last 10), newest last.' },
      containers: ref('ContainerCounts'),
      api: {
        type: ['string', 'null'],
        description:
          "ASGI apps: what the deploy of this version read of the app's OpenAPI description (`OpenAPI description captured from /openapi.json, 3 operations`, or why there is none); null for other kinds.",
      },
    },
  },
  App: { type: 'object', required: Object.keys(APP_FIELDS), additionalProperties: false, properties: APP_FIELDS },
  AppHistoryEntry: {
    type: 'object',
    required: ['workload', 'version', 'current', 'createdAt', 'createdBy', 'bundleSha256', 'imageId', 'changes'],
    additionalProperties: false,
    description: 'One version kept of one workload (`svc app history`).',
    properties: {
      workload: { type: 'string' },
      version: { type: 'integer', minimum: 1 },
      current: { type: 'boolean', description: 'The version the workload runs now.' },
      createdAt: { type: 'string', format: 'date-time' },
      createdBy: { type: ['string', 'null'], description: "Who deployed it (a token's subject); null for svc itself." },
      bundleSha256: { type: ['string', 'null'], description: 'Its code bundle; null when svc ran a project folder.' },
      imageId: { type: 'string' },
      changes: {
        type: 'array',
        items: { type: 'string' },
        description:
          'What differs from the version before it: `code`, `image`, and each setting of the resolved workload that changed (`resources`, `scaling`, `http`, ...); `new` for the first version kept.',
      },
    },
  },
  AppSummary: {
    type: 'object',
    required: ['name', 'paused', 'workloads', 'createdAt', 'updatedAt'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      paused: { type: 'boolean' },
      workloads: { type: 'integer', description: 'How many deployments (workloads) the app has.' },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
    },
  },
  Container: {
    type: 'object',
    required: [
      'id',
      'deployment',
      'app',
      'workload',
      'stage',
      'version',
      'state',
      'startedAt',
      'ageSeconds',
      'inFlight',
      'cpuSeconds',
      'memoryBytes',
      'gpu',
    ],
    additionalProperties: false,
    description: "A running container of the caller's workspace (`svc container list`).",
    properties: {
      id: { type: 'string' },
      deployment: { type: 'string', description: '`<app>/<workload>`.' },
      app: { type: 'string' },
      workload: { type: 'string' },
      stage: { type: 'string' },
      version: { type: 'integer' },
      state: { type: 'string', enum: ['starting', 'healthy', 'stopping', 'exited'] },
      startedAt: { type: 'string', format: 'date-time' },
      ageSeconds: { type: 'integer', minimum: 0 },
      inFlight: { type: 'integer', minimum: 0, description: 'Requests its workers hold now.' },
      cpuSeconds: { type: ['number', 'null'], description: 'CPU seconds used so far, from its cgroup; null where nothing accounts them.' },
      memoryBytes: { type: ['integer', 'null'], description: 'Memory held now, from its cgroup; null where svc cannot tell.' },
      gpu: {
        oneOf: [
          {
            type: 'object',
            required: ['state', 'model', 'count'],
            additionalProperties: false,
            description: "The GPUs it holds: their model (svc's name) and how many.",
            properties: { state: { const: 'held' }, model: { type: 'string' }, count: { type: 'integer', minimum: 1 } },
          },
          {
            type: 'object',
            required: ['state', 'request'],
            additionalProperties: false,
            description: 'Starting, it waits for GPUs others hold: what its workload asks (`any`, `H100 | A100 ×2`).',
            properties: { state: { const: 'waiting' }, request: { type: 'string' } },
          },
          { type: 'null', description: 'Its workload asks for no GPU, or the scheduler hands them out itself (Nomad).' },
        ],
      },
    },
  },
  Quota: {
    type: 'object',
    additionalProperties: false,
    description: 'A workspace quota (`svc workspace quota`): each bound is optional, a missing one has no bound.',
    properties: {
      containers: { type: 'integer', minimum: 0, description: 'Containers running at once, over every workload of the workspace.' },
      cpu: { type: 'number', minimum: 0, description: "Cores: the sum of the running containers' `cpu`." },
      memoryMiB: { type: 'integer', minimum: 0, description: "MiB: the sum of the running containers' `memory`." },
      gpus: { type: 'integer', minimum: 0, description: "GPUs: the sum of the running containers' `gpu=` counts." },
    },
  },
  QuotaView: {
    type: 'object',
    required: ['workspace', 'quota', 'source', 'inUse'],
    additionalProperties: false,
    properties: {
      workspace: { type: 'string' },
      quota: { oneOf: [ref('Quota'), { type: 'null' }] },
      source: {
        type: ['string', 'null'],
        enum: ['command', 'config', null],
        description: '`command`: the operator set it; `config`: `workspaceQuotas`; null: none.',
      },
      inUse: {
        type: 'object',
        required: ['containers', 'cpu', 'memoryMiB', 'gpus'],
        additionalProperties: false,
        description: "What the workspace's running containers take now.",
        properties: {
          containers: { type: 'integer', minimum: 0 },
          cpu: { type: 'number', minimum: 0 },
          memoryMiB: { type: 'integer', minimum: 0 },
          gpus: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
  Usage: {
    type: 'object',
    required: ['since', 'by', 'rows', 'total'],
    additionalProperties: false,
    description: "What the caller's workspace used since `since` (`svc usage`).",
    properties: {
      since: { type: 'string', format: 'date-time', description: 'The first hour counted (UTC).' },
      by: { type: 'string', enum: ['workload', 'app', 'day'] },
      rows: {
        type: 'array',
        items: {
          type: 'object',
          required: ['key', ...USAGE_FIGURES],
          additionalProperties: false,
          properties: {
            key: { type: 'string', description: '`<app>/<workload>`, the app, or the day (`YYYY-MM-DD`).' },
            ...USAGE_FIGURE_SCHEMAS,
            cost: COST,
          },
        },
      },
      total: {
        type: 'object',
        required: [...USAGE_FIGURES],
        additionalProperties: false,
        properties: { ...USAGE_FIGURE_SCHEMAS, cost: COST },
      },
      currency: {
        type: 'string',
        pattern: '^[A-Z]{3}$',
        description: 'The currency of `cost`; present only where the operator set prices (`usagePrices`).',
      },
    },
  },
  ExecOutcome: {
    type: 'object',
    required: ['exitCode', 'signal', 'timedOut', 'truncated', 'stdout', 'stderr'],
    additionalProperties: false,
    description: 'How a command run in a container ended (`svc container exec`).',
    properties: {
      exitCode: { type: ['integer', 'null'], description: 'null when a signal ended it.' },
      signal: { type: ['string', 'null'] },
      timedOut: { type: 'boolean', description: 'It ran past timeoutSeconds and was killed.' },
      truncated: { type: 'boolean', description: 'Some output was cut at 1 MiB a stream.' },
      stdout: { type: 'string' },
      stderr: { type: 'string' },
    },
  },
  LogLine: {
    type: 'object',
    required: ['time', 'container', 'stream', 'text'],
    properties: {
      time: { type: 'string', format: 'date-time' },
      container: { type: 'string', description: 'The container id; `build` for image build lines.' },
      stream: { type: 'string', enum: ['stdout', 'stderr', 'system'] },
      text: { type: 'string', description: 'At most 8 KiB; a longer line is cut and ends with ` … [truncated]`.' },
      version: { type: 'integer', description: 'The deployment version the container runs, when known.' },
    },
  },
  PreviewInput: {
    type: 'object',
    required: ['manifest', 'bundle'],
    additionalProperties: false,
    properties: {
      ...MANIFEST_AND_BUNDLE,
      idleTimeoutSeconds: IDLE_TIMEOUT,
      inlineSecrets: INLINE_SECRETS,
    },
  },
  Preview: {
    type: 'object',
    description: "The app's shape (App), each deployment at its preview URL, with the preview's idle timeout and when it ends if unused.",
    required: [...Object.keys(APP_FIELDS), 'idleTimeoutSeconds', 'expiresAt'],
    additionalProperties: false,
    properties: {
      ...APP_FIELDS,
      idleTimeoutSeconds: { type: ['integer', 'null'], description: 'The idle timeout the last PUT set.' },
      expiresAt: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'When the preview ends if nothing uses it from now on; null while a PUT of it builds and starts.',
      },
    },
  },
  RunInput: {
    type: 'object',
    required: ['function'],
    additionalProperties: false,
    description: 'Either `manifest` and `bundle` (uploaded code), or `app` (the deployed version of that app), never both.',
    properties: {
      app: {
        type: 'string',
        description:
          "A deployed app of the workspace: the run runs its deployed version's function, with the deploy's secrets (`svc.Function.from_name`).",
      },
      manifest: {
        type: 'object',
        description:
          "A Manifest v1 (docs/manifest.md), as `python3 -m svc.manifest` prints it, of any app: the run's app is the manifest's.",
      },
      bundle: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The sha256 of a bundle the workspace uploaded.' },
      function: {
        type: 'string',
        description: 'A function workload of the manifest (a lowercase DNS label, as the manifest names it); with `shell`, any workload.',
      },
      idleTimeoutSeconds: IDLE_TIMEOUT,
      inlineSecrets: INLINE_SECRETS,
      parameters: CLASS_PARAMETERS,
      shell: {
        type: 'boolean',
        description:
          'A run for `svc shell`: a container of the workload (of any kind) with its image, environment, secrets and volumes, to open a terminal in (`GET /api/v1/runs/<id>/terminal`), not to call.',
      },
    },
  },
  Run: {
    type: 'object',
    required: ['id', 'app', 'function', 'status', 'failure', 'calls', 'idleTimeoutSeconds', 'expiresAt', 'createdAt'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: `^${RUN_ID_SOURCE}$` },
      app: { type: 'string' },
      function: { type: 'string' },
      status: {
        type: 'string',
        enum: ['building', 'starting', 'ready', 'failed'],
        description:
          '`building`: the image is being built; `starting`: its first container starts; `ready`: calls go to its containers; `failed`: the build or the start failed (see `failure`).',
      },
      failure: {
        type: ['object', 'null'],
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: { type: 'string', description: 'A code of docs/errors.md (`image_build_failed`, `container_failed`, …).' },
          message: { type: 'string' },
        },
        description: 'Why the run failed; null unless `failed`. Its calls get this error.',
      },
      calls: {
        type: 'object',
        required: ['inFlight', 'completed'],
        additionalProperties: false,
        properties: {
          inFlight: { type: 'integer', description: 'Calls waiting for the start or running now.' },
          completed: { type: 'integer', description: 'Calls a container answered.' },
        },
      },
      idleTimeoutSeconds: { type: 'integer' },
      expiresAt: {
        type: 'string',
        format: 'date-time',
        description: 'When the run ends if nothing uses it from now on (now plus the timeout while it is in use).',
      },
      createdAt: { type: 'string', format: 'date-time' },
      parameters: {
        type: 'object',
        description:
          'A run of an @app.cls class: its parameters\' values, defaults filled in (bytes as {"base64": ...}). Absent for a function.',
      },
    },
  },
  RunList: listOf('runs', ref('Run')),
  CallInput: {
    type: 'object',
    required: ['function', 'input'],
    additionalProperties: false,
    description: 'Either `manifest` and `bundle` (uploaded code), or `app` (its deployed version), never both.',
    properties: {
      function: { type: 'string', description: 'A function of the app (a lowercase DNS label, as the manifest names it).' },
      input: {
        type: 'string',
        contentEncoding: 'base64',
        description: 'The pickled call, `pickle.dumps({"args": [...], "kwargs": {...}})`, base64.',
      },
      app: { type: 'string', description: 'A deployed app of the workspace: the call runs its deployed version, with its secrets.' },
      manifest: { type: 'object', description: 'A Manifest v1 of the app (docs/manifest.md), with `bundle`.' },
      bundle: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The sha256 of a bundle the workspace uploaded.' },
      parameters: CLASS_PARAMETERS,
      callbackUrl: {
        type: 'string',
        maxLength: 2048,
        format: 'uri',
        description:
          "Where svc POSTs the outcome once the call ended, signed with the workspace's callback secret (docs/api.md#completion-callbacks): an http or https URL. Without it, the function's `callback_url`, if it has one.",
      },
    },
  },
  Call: {
    type: 'object',
    required: [
      'id',
      'app',
      'function',
      'status',
      'attempt',
      'maxAttempts',
      'createdAt',
      'startedAt',
      'endedAt',
      'durationMs',
      'error',
      'callback',
    ],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: `^${CALL_ID_SOURCE}$` },
      app: { type: 'string' },
      function: { type: 'string' },
      status: {
        type: 'string',
        enum: [...CALL_STATUSES],
        description:
          '`queued`: waiting to start; `running`: an attempt runs; `succeeded`: it returned; `failed`: it raised, or svc could not run it (`error`); `cancelled`; `expired`: it ended longer ago than svc keeps outcomes.',
      },
      attempt: {
        type: 'integer',
        minimum: 0,
        description: 'Attempts started so far (a restart of svc mid-call starts another, up to `maxAttempts`).',
      },
      maxAttempts: { type: 'integer', minimum: 1, description: "The function's `retries` + 1." },
      createdAt: { type: 'string', format: 'date-time' },
      startedAt: { type: ['string', 'null'], format: 'date-time' },
      endedAt: { type: ['string', 'null'], format: 'date-time' },
      durationMs: { type: ['integer', 'null'], description: 'From the first start to the end; null until it ended.' },
      error: {
        type: ['object', 'null'],
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: {
            type: ['string', 'null'],
            description: "svc's code (`worker_crashed`, `timeout`, `call_interrupted`, …); null when the function raised.",
          },
          message: { type: 'string', description: "The exception (`ValueError: bad input`), or svc's message." },
        },
      },
      result: { description: "A JSON call's return value, once it succeeded (absent otherwise)." },
      waiting: {
        type: 'string',
        description:
          'Present while a `running` call waits for a container of its function that waits for a GPU: what it asks, how many of each model are busy and who holds them, and its place in the queue.',
      },
      callback: {
        type: ['object', 'null'],
        required: ['url', 'attempts', 'delivered'],
        additionalProperties: false,
        description:
          'Its completion callback (null without one): where it goes, every attempt to deliver it, and whether a receiver took it.',
        properties: {
          url: { type: 'string' },
          attempts: {
            type: 'array',
            description: "Oldest first: the receiver's HTTP status, or why there was none (`error`).",
            items: {
              type: 'object',
              required: ['at'],
              additionalProperties: false,
              properties: {
                at: { type: 'string', format: 'date-time' },
                status: { type: 'integer', description: "The receiver's answer (2xx: delivered)." },
                error: { type: 'string', description: 'No answer: the connection failed, timed out, or the URL is refused now.' },
              },
            },
          },
          delivered: { type: 'boolean', description: 'A receiver answered 2xx; attempts stop then, or an hour after the call ended.' },
        },
      },
      group: {
        type: 'object',
        required: ['id', 'index'],
        additionalProperties: false,
        description: "Present for an input of a call group (`spawn_map`): the group, and the input's place in it.",
        properties: {
          id: { type: 'string', pattern: `^${GROUP_ID_SOURCE}$` },
          index: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
  CallGroupInput: {
    type: 'object',
    required: ['function', 'inputs'],
    additionalProperties: false,
    description: 'Either `manifest` and `bundle` (uploaded code), or `app` (its deployed version), never both, as for a spawned call.',
    properties: {
      function: { type: 'string', description: 'A function of the app (a lowercase DNS label, as the manifest names it).' },
      inputs: BATCH_INPUTS,
      more: MORE_INPUTS,
      app: { type: 'string', description: 'A deployed app of the workspace: the inputs run its deployed version, with its secrets.' },
      manifest: { type: 'object', description: 'A Manifest v1 of the app (docs/manifest.md), with `bundle`.' },
      bundle: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The sha256 of a bundle the workspace uploaded.' },
      parameters: CLASS_PARAMETERS,
    },
  },
  CallGroupInputs: {
    type: 'object',
    required: ['inputs'],
    additionalProperties: false,
    properties: { inputs: BATCH_INPUTS, more: MORE_INPUTS },
  },
  CallGroup: {
    type: 'object',
    required: ['id', 'app', 'function', 'inputs', 'closed', 'createdAt', 'status', 'counts'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: `^${GROUP_ID_SOURCE}$` },
      app: { type: 'string' },
      function: { type: 'string' },
      inputs: { type: 'integer', minimum: 0, description: 'Inputs recorded so far (indexes 0 to inputs - 1).' },
      closed: { type: 'boolean', description: 'Its last batch came (or it was cancelled): it takes no more.' },
      createdAt: { type: 'string', format: 'date-time' },
      status: {
        type: 'string',
        enum: ['running', 'succeeded', 'failed', 'cancelled', 'expired'],
        description:
          '`running` while an input is queued or running or more may come; then `failed` if one failed, `cancelled` if one was cancelled, `expired` when their outcomes are gone, else `succeeded`.',
      },
      counts: {
        type: 'object',
        required: [...CALL_STATUSES],
        additionalProperties: false,
        description: 'Its inputs by status.',
        properties: Object.fromEntries(CALL_STATUSES.map((status) => [status, { type: 'integer', minimum: 0 }])),
      },
    },
  },
  CallGroupBatch: {
    type: 'object',
    required: ['group', 'calls'],
    additionalProperties: false,
    properties: {
      group: {
        type: 'object',
        required: ['id', 'app', 'function', 'inputs', 'closed', 'createdAt'],
        additionalProperties: false,
        description: 'The group after the batch, without its counts (`GET /call-groups/:id` has them).',
        properties: {
          id: { type: 'string', pattern: `^${GROUP_ID_SOURCE}$` },
          app: { type: 'string' },
          function: { type: 'string' },
          inputs: { type: 'integer', minimum: 0 },
          closed: { type: 'boolean' },
          createdAt: { type: 'string', format: 'date-time' },
        },
      },
      calls: { type: 'array', items: { type: 'string', pattern: `^${CALL_ID_SOURCE}$` }, description: "The batch's calls, in its order." },
    },
  },
  CancelledCallGroup: {
    type: 'object',
    required: ['cancelled', 'group'],
    additionalProperties: false,
    properties: {
      cancelled: { type: 'integer', minimum: 0, description: 'Inputs that had not ended and are now cancelled.' },
      group: ref('CallGroup'),
    },
  },
  CallbackSecret: {
    type: 'object',
    required: ['secret', 'createdAt'],
    additionalProperties: false,
    properties: {
      secret: {
        type: 'string',
        description: 'The key of the `X-Svc-Signature` HMAC-SHA256 (its UTF-8 bytes, `svcwh_` included). Keep it like a password.',
      },
      createdAt: { type: 'string', format: 'date-time', description: 'When it was made (first use, or last rotation).' },
    },
  },
  CallList: listOf('calls', ref('Call')),
  SpawnedCall: {
    type: 'object',
    required: ['call_id', 'status_url', 'call'],
    additionalProperties: false,
    properties: {
      call_id: { type: 'string', pattern: `^${CALL_ID_SOURCE}$` },
      status_url: { type: 'string', description: 'Where to poll it: `/api/v1/calls/<id>`.' },
      call: ref('Call'),
    },
  },
  CallOutcome: {
    type: 'object',
    required: ['call', 'frame'],
    additionalProperties: false,
    properties: {
      call: ref('Call'),
      frame: {
        type: 'object',
        required: ['type'],
        description:
          "The call's last frame as its container wrote it: `result` with `pickle` (a pickled call), `json` (a JSON call) or `response` (a request sent with `Prefer: respond-async`), or `error` with `exception`, `traceback`, `pickle` and, for svc's own failures, `code` (a deferred request answered 5xx keeps that `response` too).",
        properties: {
          type: { type: 'string', enum: ['result', 'error'] },
          response: {
            type: 'object',
            required: ['status', 'headers', 'body'],
            additionalProperties: false,
            description: "A deferred request's answer, as the workload gave it.",
            properties: {
              status: { type: 'integer', minimum: 100, maximum: 599 },
              headers: {
                type: 'array',
                items: { type: 'string' },
                description: 'Flat `[name, value, …]`, in order, repeated names kept; hop-by-hop ones left out.',
              },
              body: { type: 'string', contentEncoding: 'base64' },
            },
          },
        },
      },
    },
  },
  CallLogs: {
    type: 'object',
    required: ['lines', 'dropped'],
    additionalProperties: false,
    properties: {
      lines: {
        type: 'array',
        description: 'Oldest first.',
        items: {
          type: 'object',
          required: ['attempt', 'stream', 'line'],
          additionalProperties: false,
          properties: {
            attempt: {
              type: 'integer',
              minimum: 1,
              description: 'The attempt that printed it (a retry, or a run again after a restart of svc).',
            },
            stream: { type: 'string', enum: ['stdout', 'stderr'] },
            line: { type: 'string', description: 'Without its line break; one over 16 KiB is cut, saying so.' },
          },
        },
      },
      dropped: { type: 'integer', minimum: 0, description: 'Earlier lines left out to keep the last 256 KiB.' },
    },
  },
  CallFrame: {
    description: "One line of a call's answer.",
    oneOf: [
      {
        type: 'object',
        required: ['type', 'stream', 'line'],
        additionalProperties: false,
        properties: {
          type: { const: 'log' },
          stream: { type: 'string', enum: ['stdout', 'stderr'] },
          line: { type: 'string', description: 'A line the call printed, without its line break.' },
        },
      },
      {
        type: 'object',
        required: ['type', 'pickle'],
        additionalProperties: false,
        properties: {
          type: { const: 'result' },
          pickle: { type: 'string', contentEncoding: 'base64', description: 'The pickled return value.' },
        },
      },
      {
        type: 'object',
        required: ['type', 'pickle', 'exception', 'traceback'],
        additionalProperties: false,
        properties: {
          type: { const: 'error' },
          pickle: {
            type: ['string', 'null'],
            contentEncoding: 'base64',
            description: 'The pickled exception; null when it cannot be pickled, or in a frame svc adds.',
          },
          exception: { type: 'string', description: '`Type: message`.' },
          traceback: { type: ['string', 'null'], description: 'The remote traceback; null in a frame svc adds.' },
          code: {
            type: 'string',
            description:
              'Only in the frame svc adds when the connection to the container broke mid-call (`worker_crashed`, `upstream_unreachable`).',
          },
        },
      },
    ],
  },
  Map: {
    type: 'object',
    required: ['id', 'run', 'function', 'status', 'cancelReason', 'inputs', 'lastReceived', 'createdAt', 'endedAt'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: `^${MAP_ID_SOURCE}$` },
      run: { type: 'string', pattern: `^${RUN_ID_SOURCE}$` },
      function: { type: 'string' },
      status: {
        type: 'string',
        enum: ['running', 'succeeded', 'cancelled'],
        description:
          '`running`: inputs are coming or being answered; `succeeded`: the last input came and every input was answered (failures included); `cancelled`: see `cancelReason`.',
      },
      cancelReason: {
        type: ['string', 'null'],
        enum: ['deleted', 'run_ended', 'unread', null],
        description: '`deleted` (DELETE), `run_ended` (its run ended), `unread` (nobody read its outputs for 30 s); null unless cancelled.',
      },
      inputs: {
        type: 'object',
        required: ['received', 'queued', 'running', 'succeeded', 'failed', 'cancelled'],
        additionalProperties: false,
        properties: {
          received: { type: 'integer', description: 'Inputs taken; the sum of the five others.' },
          queued: { type: 'integer', description: "Not started: waiting for room in the map's window, for the run, or for a slot." },
          running: { type: 'integer', description: 'A container is answering them.' },
          succeeded: { type: 'integer', description: 'Answered with a result.' },
          failed: { type: 'integer', description: 'Answered with an error frame.' },
          cancelled: { type: 'integer', description: 'Never started: the map was cancelled first.' },
        },
      },
      lastReceived: { type: 'boolean', description: 'The last input came (`?last=true`).' },
      createdAt: { type: 'string', format: 'date-time' },
      endedAt: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'When the last input was answered (cancelled: when the last one running ended); null until then.',
      },
      waiting: {
        type: 'string',
        description:
          "Present while inputs are queued and the run's containers wait for a GPU: what it asks, and how many of each model are busy.",
      },
    },
  },
  MapInput: {
    type: 'object',
    description: 'One line of a batch of inputs.',
    required: ['index', 'pickle'],
    additionalProperties: false,
    properties: {
      index: { type: 'integer', minimum: 0, description: "The input's place: the map's inputs are numbered 0, 1, 2, … across batches." },
      pickle: {
        type: 'string',
        contentEncoding: 'base64',
        description: '`pickle.dumps({"args": [...], "kwargs": {...}})`, base64 (standard alphabet, padded).',
      },
    },
  },
  MapFrame: {
    description: "One line of a map's outputs: a call's frame with its input's `index`, or the last line, `end`.",
    oneOf: [
      {
        type: 'object',
        required: ['type', 'index', 'stream', 'line'],
        additionalProperties: false,
        properties: {
          type: { const: 'log' },
          index: INPUT_INDEX,
          stream: { type: 'string', enum: ['stdout', 'stderr'] },
          line: { type: 'string' },
        },
      },
      {
        type: 'object',
        required: ['type', 'index', 'pickle'],
        additionalProperties: false,
        properties: { type: { const: 'result' }, index: INPUT_INDEX, pickle: { type: 'string', contentEncoding: 'base64' } },
      },
      {
        type: 'object',
        required: ['type', 'index', 'pickle', 'exception', 'traceback'],
        additionalProperties: false,
        properties: {
          type: { const: 'error' },
          index: INPUT_INDEX,
          pickle: { type: ['string', 'null'], contentEncoding: 'base64' },
          exception: { type: 'string' },
          traceback: { type: ['string', 'null'] },
          code: {
            type: 'string',
            description: 'In a frame svc adds: why the input could not be called or answered (`worker_crashed`, `timeout`, …).',
          },
        },
      },
      {
        type: 'object',
        required: ['type', 'map'],
        additionalProperties: false,
        properties: { type: { const: 'end' }, map: { $ref: '#/components/schemas/Map' } },
      },
    ],
  },
  ExampleSummary: {
    type: 'object',
    required: ['name', 'description'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', description: "The example's folder name, a lowercase DNS label: `svc example download <name>`." },
      description: {
        type: 'string',
        description: "The first paragraph of the example's README.md after its title, on one line; empty when it has none.",
      },
    },
  },
  AppInterface: {
    type: 'object',
    required: ['app', 'generatedFrom', 'workloads'],
    additionalProperties: false,
    properties: {
      app: { type: 'string' },
      generatedFrom: {
        type: 'object',
        required: ['versions'],
        additionalProperties: false,
        properties: {
          versions: {
            type: 'object',
            additionalProperties: { type: 'integer' },
            description: 'The version of each workload described, by name.',
          },
        },
      },
      workloads: { type: 'array', items: ref('InterfaceWorkload'), description: 'Every deployed workload, by name; functions too.' },
    },
  },
  InterfaceWorkload: {
    type: 'object',
    required: ['name', 'kind', 'doc', 'url', 'path', 'hostUrl', 'methods', 'route', 'authorized', 'parameters', 'returns', 'status', 'api'],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      kind: { type: 'string', enum: ['endpoint', 'asgi', 'realtime', 'function'] },
      doc: { type: ['string', 'null'], description: "The function's docstring." },
      url: { type: ['string', 'null'], description: 'Stable path-based URL with the route (ws:// for realtime); null for functions.' },
      path: { type: ['string', 'null'], description: "The URL relative to the server's base URL; null for functions." },
      hostUrl: { type: ['string', 'null'], description: 'Host-based URL, when the server has a base domain.' },
      methods: { type: 'array', items: { type: 'string' }, description: "An endpoint's methods; empty for the other kinds." },
      route: { type: ['string', 'null'], description: "An endpoint's route; / for asgi and realtime; null for functions." },
      authorized: { type: 'boolean', description: 'False when the URL is public.' },
      parameters: { type: ['object', 'null'], description: 'JSON Schema of the arguments (docs/manifest.md); null for asgi.' },
      returns: { type: ['object', 'null'], description: 'JSON Schema of the return value; null for asgi.' },
      status: { type: 'string', enum: ['running', 'paused', 'stopped', 'failed', 'not_served'] },
      methodsOfClass: {
        type: 'array',
        items: { type: 'string' },
        description: 'A function that is an @app.cls class: the methods its callers call from Python. Absent otherwise.',
      },
      gpu: {
        type: 'object',
        required: ['models', 'count'],
        additionalProperties: false,
        description: 'The GPUs each of its containers gets (`gpu=`): the models tried in order, and how many. Absent without.',
        properties: { models: { type: 'array', items: { type: 'string' } }, count: { type: 'integer', minimum: 1 } },
      },
      api: {
        oneOf: [{ type: 'null' }, ref('InterfaceApi')],
        description:
          'ASGI apps: the HTTP API the app described in OpenAPI when it was deployed; null for other kinds and for an app that published none.',
      },
    },
  },
  InterfaceApi: {
    type: 'object',
    required: ['openapi', 'source', 'capturedAt', 'operations', 'definitions'],
    additionalProperties: false,
    properties: {
      openapi: { type: 'object', description: 'The OpenAPI document as the app served it.' },
      source: { type: 'string', description: "The app's path it was read from (`/openapi.json`)." },
      capturedAt: { type: 'string', format: 'date-time' },
      operations: { type: 'array', items: ref('InterfaceOperation'), description: "Every operation of `paths`, in the document's order." },
      definitions: {
        type: 'object',
        additionalProperties: { type: 'object' },
        description:
          "The document's `components.schemas` by name, as plain JSON Schema; every `$ref` in `operations` and `definitions` is `#/$defs/<name>`, resolved here.",
      },
    },
  },
  InterfaceOperation: {
    type: 'object',
    required: ['name', 'operationId', 'method', 'path', 'summary', 'description', 'deprecated', 'parameters', 'body', 'result'],
    additionalProperties: false,
    properties: {
      name: {
        type: 'string',
        description:
          "A snake_case identifier unique within the app: the operationId (FastAPI's default ids without their path-and-method tail), else method and path.",
      },
      operationId: { type: ['string', 'null'] },
      method: { type: 'string', description: 'Upper case: `GET`, `POST`, …' },
      path: { type: 'string', description: "As the description gives it, `{name}` placeholders included, relative to the app's root." },
      summary: { type: ['string', 'null'] },
      description: { type: ['string', 'null'] },
      deprecated: { type: 'boolean' },
      parameters: {
        type: 'array',
        description: "Path parameters first (in the path's order), then query and header ones; cookie parameters are left out.",
        items: {
          type: 'object',
          required: ['name', 'in', 'required', 'schema', 'description'],
          additionalProperties: false,
          properties: {
            name: { type: 'string' },
            in: { type: 'string', enum: ['path', 'query', 'header'] },
            required: { type: 'boolean' },
            schema: { type: 'object' },
            description: { type: ['string', 'null'] },
          },
        },
      },
      body: {
        oneOf: [
          { type: 'null' },
          {
            type: 'object',
            required: ['contentType', 'required', 'schema'],
            additionalProperties: false,
            properties: { contentType: { type: 'string' }, required: { type: 'boolean' }, schema: { type: 'object' } },
          },
        ],
      },
      result: {
        type: 'object',
        required: ['status', 'contentType', 'schema'],
        additionalProperties: false,
        description: 'The first 2xx response (200 with any JSON when the description lists none).',
        properties: {
          status: { type: 'integer' },
          contentType: { type: ['string', 'null'], description: 'null: no body.' },
          schema: { type: ['object', 'null'], description: 'JSON Schema of a JSON body; null when the body is not JSON or there is none.' },
        },
      },
    },
  },
  DeployPlan: {
    type: 'object',
    required: ['app', 'stage', 'scheduler', 'workloads', 'removed'],
    properties: {
      app: { type: 'string' },
      stage: { type: 'string', enum: ['deployed', 'preview'] },
      scheduler: { type: 'string', description: '`local` or `nomad`.' },
      removed: { type: 'array', items: { type: 'string' }, description: 'Workloads a prune would delete.' },
      workloads: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'kind', 'change', 'url', 'job'],
          properties: {
            name: { type: 'string' },
            kind: { type: 'string' },
            change: { type: 'string', enum: ['new', 'new_version'] },
            url: { type: ['string', 'null'] },
            job: {
              oneOf: [
                { type: 'null' },
                {
                  type: 'object',
                  required: ['id', 'change', 'placements', 'failures', 'warnings'],
                  properties: {
                    id: { type: 'string', description: 'The Nomad job ID.' },
                    change: { type: 'string', enum: ['create', 'update', 'none'] },
                    placements: {
                      type: 'object',
                      additionalProperties: { type: 'integer' },
                      description: "Nomad's DesiredTGUpdates summed: place, stop, inPlaceUpdate, destructiveUpdate, … (zeros left out).",
                    },
                    failures: { type: 'array', items: { type: 'string' } },
                    warnings: { type: 'array', items: { type: 'string' } },
                  },
                },
              ],
            },
          },
        },
      },
    },
  },
  SignInLink: {
    type: 'object',
    required: ['path', 'expiresAt', 'account'],
    properties: {
      path: { type: 'string', description: '`/login#<secret>`: works once, for 15 minutes.' },
      expiresAt: { type: 'string', format: 'date-time' },
      account: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
    },
  },
  ...scheduledRunSchemas,
};

/**
 * Maps of remote runs (`.map()`, `.starmap()`, `.for_each()` in Python): a
 * map is created on a run, takes its inputs in NDJSON batches (each answered
 * once its inputs are in the map's window: backpressure), and streams its
 * outputs, in the order they happen, to one reader. Two connections, no
 * full-duplex HTTP: it works through any proxy. A map of another workspace
 * is `not_found`, in the same words as one that never was. See
 * core/services/maps for its life.
 */
import { SvcError } from '../../model/errors.js';
import { collect } from '../../services/runs/call-body.js';
import { MAP_ID_SOURCE } from '../../services/maps/types.js';
import { MAX_BATCH_INPUTS } from '../../services/maps/input-batch.js';
import { answer, error, holding, idParameter, json, ref } from './openapi/shared.js';
import { RUN_ID } from './runs.js';
import type { Parameter, Response } from './openapi/types.js';
import type { ApiRoute } from './types.js';

const NDJSON_HEADERS = { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-cache' };

const MAP_ID: Parameter = idParameter(
  'map',
  MAP_ID_SOURCE,
  'map-0123456789abcdef',
  'POST /api/v1/runs/<id>/maps answers the id of the map it creates.',
);
const LAST: Parameter = {
  name: 'last',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: ['true', 'false'] },
  description: '`true`: no input follows this batch (it may be empty).',
  refusal: {
    code: 'bad_request',
    refuse: (value) =>
      new SvcError('bad_request', `last=${JSON.stringify(value)} is not true or false.`, { hint: 'Send ?last=true with the last batch.' }),
  },
};
const BAD_MAP_ID: Response = error('`bad_request`: the id is not a map id (`map-` and 16 hex digits), or a query parameter.');
const NO_SUCH_MAP: Response = error(
  '`not_found`: the workspace has no such map: it ended more than 10 minutes ago, or never existed (a map of another workspace is not found either).',
);
const THE_MAP = holding('map', ref('Map'));

export const mapRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/runs/:id/maps',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'createMap',
      summary:
        "Create a map of the run's function: send its inputs to POST /maps/:id/inputs, read its outputs from GET /maps/:id/outputs. At most 64 maps run at once per workspace.",
      pathParameters: [RUN_ID],
      requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
      responses: {
        201: answer('The map, with no input yet.', THE_MAP),
        400: error('`bad_request`: the id is not a run id, a field in the body (it takes none), or a query parameter.'),
        404: error('`not_found`: the workspace has no such run: it ended or never existed.'),
        429: error('`too_many_maps`: the workspace already has 64 maps running.'),
      },
    },
    async handle({ params, principal }, services) {
      const map = services.maps.create(principal.workspace, params.id!);
      return { status: 201, body: { map }, headers: { Location: `/api/v1/maps/${map.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/maps/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getMap',
      summary: 'One map: its status and its inputs by where they are (queued, running, succeeded, failed, cancelled).',
      pathParameters: [MAP_ID],
      responses: { 200: answer('The map.', THE_MAP), 400: BAD_MAP_ID, 404: NO_SUCH_MAP },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: { map: services.maps.get(principal.workspace, params.id!) } };
    },
  },
  {
    method: 'DELETE',
    path: '/maps/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'cancelMap',
      summary:
        'Cancel the map: its inputs not started are cancelled (counted); those running finish and their outputs still stream, then the end frame. Cancelling an ended map changes nothing.',
      pathParameters: [MAP_ID],
      responses: { 204: { description: 'Cancelled.' }, 400: BAD_MAP_ID, 404: NO_SUCH_MAP },
    },
    async handle({ params, principal }, services) {
      services.maps.cancel(principal.workspace, params.id!);
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    path: '/maps/:id/inputs',
    auth: 'token',
    body: 'ndjson',
    openapi: {
      operationId: 'sendMapInputs',
      summary: `Send a batch of the map's inputs, one JSON line each, their indices continuing the map's sequence (0, 1, 2, … across batches), at most ${MAX_BATCH_INPUTS} per batch. The answer comes once every input of the batch is in the map's window (backpressure): send the next batch then.`,
      pathParameters: [MAP_ID],
      parameters: [LAST],
      requestBody: { required: false, content: { 'application/x-ndjson': { schema: ref('MapInput') } } },
      responses: {
        202: answer('Every input of the batch was taken (or the map was cancelled meanwhile: its status says so).', THE_MAP),
        400: error(
          `\`bad_request\`: the id is not a map id, \`last\` is not true or false, a Content-Type other than application/x-ndjson, more than ${MAX_BATCH_INPUTS} inputs, or a line that is not an input (\`details.line\`), or whose index does not continue the sequence (\`details.expected\`). Nothing of the batch was taken.`,
        ),
        404: NO_SUCH_MAP,
        409: error(
          '`conflict`: the map is cancelled or succeeded, it already received its last input, or another batch of it still waits for room.',
        ),
        413: error("`payload_too_large`: the batch is over the gateway's body limit (`maxBodyBytes`, 32 MiB by default)."),
      },
    },
    async handle({ params, principal, headers, query, upload }, services) {
      // A last batch may be no body at all (curl -X POST '...?last=true'): no Content-Type is asked of it.
      const empty =
        headers['content-length'] === '0' || (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined);
      const body = empty ? Buffer.alloc(0) : await collect(upload!());
      const map = await services.maps.inputs(principal.workspace, params.id!, body, query.get('last') === 'true');
      return { status: 202, body: { map } };
    },
  },
  {
    method: 'GET',
    path: '/maps/:id/outputs',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getMapOutputs',
      summary:
        "The map's outputs as NDJSON, streamed as they happen (completion order): `log` frames, one `result` or `error` frame per input, each with its input's `index`, and, once the last input is answered or the map is cancelled, the `end` frame. One reader at a time; a map nobody reads for 30 s is cancelled.",
      pathParameters: [MAP_ID],
      responses: {
        200: { description: 'One MapFrame per line.', content: { 'application/x-ndjson': { schema: ref('MapFrame') } } },
        400: BAD_MAP_ID,
        404: NO_SUCH_MAP,
        409: error('`conflict`: another client reads the outputs of this map.'),
      },
    },
    async handle({ params, principal }, services) {
      return { status: 200, headers: NDJSON_HEADERS, body: services.maps.outputs(principal.workspace, params.id!), flushHeaders: true };
    },
  },
];

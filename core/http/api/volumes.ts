/**
 * The caller's workspace's volumes (core/services/volumes): create, list, delete, and their files in
 * and out. Files stream both ways: an upload (`PUT .../files?path=`, `application/octet-stream`) is
 * written beside its target and renamed onto it once complete; a download is the file as it is on
 * disk. Another workspace's volume answers as one that never was.
 */
import { SvcError } from '../../model/errors.js';
import { NAME_PATTERN } from '../../model/names.js';
import { MAX_VOLUME_PATH_CHARS } from '../../model/volume-paths.js';
import { MAX_LIST_ENTRIES } from '../../infra/volumes/file-errors.js';
import { answer, BAD_JSON_BODY, error, holding, json, listOf, NAME_INVALID, nameRefusal, ref, wholeNumber } from './openapi/shared.js';
import type { Parameter } from './openapi/types.js';
import { mountedBy } from '../../services/volumes/mounted-by.js';
import { pickByteRange } from './byte-range.js';
import type { VolumeAnswer, VolumeView } from '../../services/volumes/types.js';
import { API_PREFIX, type ApiRoute, type ApiServices } from './types.js';

const VOLUME: Parameter = {
  name: 'volume',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: NAME_PATTERN },
  description: "The volume's name (a lowercase DNS label).",
  refusal: nameRefusal('volume'),
};

/** `path=`: where in the volume, relative to its root (checked by core/model/volume-paths.ts). */
function pathParameter(required: boolean): Parameter {
  return {
    name: 'path',
    in: 'query',
    required,
    schema: { type: 'string', maxLength: MAX_VOLUME_PATH_CHARS, ...(required ? { minLength: 1 } : {}) },
    description: 'A path inside the volume, relative to its root ("models/small.bin"); "" or leaving it out is the root.',
    refusal: {
      code: 'bad_request',
      refuse: (value) =>
        value === undefined || value === ''
          ? new SvcError('bad_request', 'path= is missing: name a file or folder inside the volume.', {
              hint: "For example ?path=models/small.bin (a volume's root is not a file).",
              details: { field: 'path' },
            })
          : new SvcError('bad_request', `path= is longer than ${MAX_VOLUME_PATH_CHARS} characters.`, { details: { field: 'path' } }),
    },
  };
}

/** A query flag: `true`, `false` or left out (false). */
function flag(name: string, description: string): Parameter {
  return {
    name,
    in: 'query',
    required: false,
    schema: { type: 'string', enum: ['true', 'false'] },
    description,
    refusal: {
      code: 'bad_request',
      refuse: (value) =>
        new SvcError('bad_request', `${name}=${JSON.stringify(value)} is neither true nor false.`, { details: { field: name } }),
    },
  };
}

const RECURSIVE = flag('recursive', 'A folder with everything below it.');
/** A listing's pages: how many entries at most, after which. */
const LIMIT = wholeNumber(
  'limit',
  '^([1-9][0-9]{0,3}|10000)$',
  `from 1 to ${MAX_LIST_ENTRIES}`,
  `The most entries to answer, 1 to ${MAX_LIST_ENTRIES}: one page, whose \`next\` says where the next starts. Without \`limit\` or \`after\`, all entries come at once, and more than ${MAX_LIST_ENTRIES} are refused.`,
);
const AFTER: Parameter = {
  name: 'after',
  in: 'query',
  required: false,
  schema: { type: 'string', maxLength: MAX_VOLUME_PATH_CHARS },
  description:
    'The page after this entry (the `next` of the page before, a path below `path`); the entry need not exist any more. With it, at most `limit` entries come (the most, without one).',
  refusal: {
    code: 'bad_request',
    refuse: () =>
      new SvcError('bad_request', `after= is longer than ${MAX_VOLUME_PATH_CHARS} characters.`, { details: { field: 'after' } }),
  },
};
const FORCE = flag('force', 'Delete the volume even while deployed workloads or runs mount it.');

const NO_SUCH_VOLUME = error(
  "`not_found`: the caller's workspace has no such volume (another workspace's is not found either), or the volume no such path.",
);
const BAD_PATH = error(
  '`bad_request`: a path that is absolute, holds `..` or leads outside the volume through a link, or names a folder where a file is wanted.',
);

const volumePath = (name: string) => `${API_PREFIX}/volumes/${name}`;

/** A volume as the API answers it: with the workloads and runs that mount it. */
export function withUsers(services: Pick<ApiServices, 'deployments' | 'runs'>, workspace: string, view: VolumeView): VolumeAnswer {
  return { ...view, mountedBy: mountedBy([services.deployments, services.runs], workspace, view.name) };
}

export const volumeRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/volumes',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listVolumes',
      summary: "The caller's workspace's volumes, by name, with the bytes each holds.",
      responses: { 200: answer('The volumes.', listOf('volumes', ref('Volume'))) },
    },
    async handle({ principal }, services) {
      const found = await services.volumes.list(principal.workspace);
      return { status: 200, body: { volumes: found.map((view) => withUsers(services, principal.workspace, view)) } };
    },
  },
  {
    method: 'POST',
    path: '/volumes',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'createVolume',
      summary:
        "Creates an empty volume in the caller's workspace (`svc.Volume.from_name(name, create_if_missing=True)`, `svc volume create`).",
      requestBody: {
        required: true,
        content: json({ type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string' } } }),
      },
      leftToHandler: { name: ['type'] },
      responses: {
        201: answer('Created.', ref('Volume')),
        400: BAD_JSON_BODY,
        409: error('`conflict`: the workspace already has a volume of this name.'),
        422: NAME_INVALID,
        500: error(
          "`container_failed`: on Nomad with a CSI plugin, the volume's keeper could not be placed or did not start (Nomad's reason in the message); nothing of the volume is left.",
        ),
        502: error(
          '`nomad_rejected`: on Nomad with a CSI plugin, Nomad or the plugin refused to create the CSI volume (their text in the message).',
        ),
      },
    },
    async handle({ body, principal }, { volumes }) {
      const volume = await volumes.create(principal.workspace, body.name as string, principal);
      return { status: 201, body: { ...volume, mountedBy: [] }, headers: { Location: volumePath(volume.name) } };
    },
  },
  {
    method: 'GET',
    path: '/volumes/:volume',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getVolume',
      summary: 'One volume: when it was made, the bytes it holds and the most it may hold.',
      pathParameters: [VOLUME],
      responses: { 200: answer('The volume.', ref('Volume')), 404: NO_SUCH_VOLUME, 422: NAME_INVALID },
    },
    async handle({ params, principal }, services) {
      return {
        status: 200,
        body: withUsers(services, principal.workspace, await services.volumes.get(principal.workspace, params.volume!)),
      };
    },
  },
  {
    method: 'DELETE',
    path: '/volumes/:volume',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'deleteVolume',
      summary:
        'Deletes a volume and every file in it; refused (409 `volume_in_use`, naming them) while deployed workloads or runs mount it, unless `force=true`.',
      pathParameters: [VOLUME],
      parameters: [FORCE],
      responses: {
        204: { description: 'Deleted.' },
        400: error('`bad_request`: `force` is neither true nor false.'),
        404: NO_SUCH_VOLUME,
        409: error('`volume_in_use`: deployed workloads or runs mount it (`details.users`); nothing was deleted.'),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal, query }, { volumes, deployments, runs }) {
      const { workspace } = principal;
      const name = params.volume!;
      await volumes.get(workspace, name); // an unknown volume is 404 before anything else
      const users = mountedBy([deployments, runs], workspace, name);
      if (users.length > 0 && query.get('force') !== 'true') {
        throw new SvcError('volume_in_use', `the volume ${name} is mounted by ${users.join(', ')}.`, {
          hint: `Remove volumes= from those workloads and deploy, or delete it anyway (their containers lose its files): svc volume delete ${name} --force.`,
          details: { users },
        });
      }
      await volumes.delete(workspace, name);
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: '/volumes/:volume/entries',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listVolumeEntries',
      summary:
        'What a folder of the volume holds (everything below it with `recursive=true`), or the one entry of a file; sorted by path, in pages with `limit` and `after`.',
      pathParameters: [VOLUME],
      parameters: [pathParameter(false), RECURSIVE, LIMIT, AFTER],
      responses: {
        200: answer('The entries, and where the next page starts.', ref('VolumeEntryPage')),
        400: BAD_PATH,
        404: NO_SUCH_VOLUME,
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal, query }, { volumes }) {
      const limit = query.get('limit');
      const after = query.get('after');
      const page = limit === null && after === null ? null : { after, limit: limit === null ? MAX_LIST_ENTRIES : Number(limit) };
      const listing = await volumes.ls(
        principal.workspace,
        params.volume!,
        query.get('path') ?? '',
        query.get('recursive') === 'true',
        page,
      );
      return { status: 200, body: listing };
    },
  },
  {
    method: 'PUT',
    path: '/volumes/:volume/files',
    auth: 'token',
    body: 'file',
    openapi: {
      operationId: 'putVolumeFile',
      summary:
        'Stores the body (`application/octet-stream`, streamed) as the file at `path`, making its folders; a file there is replaced once all of the new one arrived, and a half-sent one never appears.',
      pathParameters: [VOLUME],
      parameters: [pathParameter(true)],
      responses: {
        201: answer('Stored.', holding('entry', ref('VolumeEntry'))),
        400: BAD_PATH,
        404: NO_SUCH_VOLUME,
        409: error('`conflict`: a folder is at `path`, or a file where a folder of it would be.'),
        413: error('`payload_too_large`: the body is larger than a volume may hold.'),
        422: NAME_INVALID,
        507: error(
          "`volume_full`: the file would take the volume, or the workspace's volumes together, past their limit (`details` has the figures).",
        ),
      },
    },
    async handle({ params, principal, query, headers, upload }, { volumes }) {
      const declared = headers['content-length'] === undefined ? null : Number(headers['content-length']);
      const entry = await volumes.put(principal.workspace, params.volume!, query.get('path')!, upload!(), declared);
      return { status: 201, body: { entry } };
    },
  },
  {
    method: 'GET',
    path: '/volumes/:volume/files',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getVolumeFile',
      summary:
        'The file at `path`, streamed as it is (`application/octet-stream`, with its Content-Length and ETag). A `Range` of one span of bytes (`bytes=1048576-`) answers 206 with those bytes, so that an interrupted download goes on where it stopped; with `If-Range` naming an earlier ETag, a file changed since answers whole (200).',
      pathParameters: [VOLUME],
      parameters: [pathParameter(true)],
      responses: {
        200: { description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        206: {
          description: 'The bytes the `Range` asked for (`Content-Range` says which, of how many).',
          content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
        },
        400: BAD_PATH,
        404: NO_SUCH_VOLUME,
        416: error('`range_not_satisfiable`: the `Range` starts past the end of the file (`Content-Range: bytes */<size>`).'),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal, query, headers }, { volumes }) {
      const range = pickByteRange(headers.range, headers['if-range']);
      const file = await volumes.open(principal.workspace, params.volume!, query.get('path')!, range);
      const partial = file.start > 0 || file.end < file.size - 1;
      return {
        status: partial ? 206 : 200,
        body: file.stream,
        headers: {
          'Content-Type': 'application/octet-stream',
          'Content-Length': String(file.end - file.start + 1),
          'Accept-Ranges': 'bytes',
          ETag: file.etag,
          ...(partial ? { 'Content-Range': `bytes ${file.start}-${file.end}/${file.size}` } : {}),
        },
      };
    },
  },
  {
    method: 'DELETE',
    path: '/volumes/:volume/files',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'deleteVolumeFile',
      summary: 'Removes the file at `path`, or the folder with everything in it with `recursive=true`; never the root (delete the volume).',
      pathParameters: [VOLUME],
      // Not required: the root ("" or left out) is refused by the files themselves, saying to delete the volume.
      parameters: [pathParameter(false), RECURSIVE],
      responses: { 204: { description: 'Removed.' }, 400: BAD_PATH, 404: NO_SUCH_VOLUME, 422: NAME_INVALID },
    },
    async handle({ params, principal, query }, { volumes }) {
      await volumes.remove(principal.workspace, params.volume!, query.get('path') ?? '', query.get('recursive') === 'true');
      return { status: 204 };
    },
  },
];

/** The OpenAPI facts of the routes in bundles.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, error, holding, ref, SHA256, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const uploadBundle: Operation = {
  operationId: 'uploadBundle',
  summary: "Upload a code bundle (the tar.gz of `python3 -m svc.bundle`), checked against its sha256 and for safe extraction, and recorded for the caller's workspace.",
  parameters: [
    {
      name: 'X-Bundle-Sha256',
      in: 'header',
      required: true,
      schema: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
      description: 'The sha256 of the body, checked once it has arrived.',
    },
  ],
  requestBody: { required: true, content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } } },
  responses: {
    201: answer('Stored for this workspace.', ref('BundleUpload')),
    200: answer('The workspace had this bundle already (`created: false`).', ref('BundleUpload')),
    400: error('`bad_request`: X-Bundle-Sha256 missing or not a sha256, a Content-Type other than application/gzip, a query parameter.'),
    401: UNAUTHORIZED,
    413: error("`bundle_too_large`: the upload is over the server's bundle limit (100 MiB by default), or an entry or the whole archive is over the extraction limits."),
    422: error("`bundle_invalid`: the body's sha256 is not the one announced (the message names both), or the archive is not gzip, is corrupt, or holds an entry unsafe to extract (`details.entry`, `details.rule`)."),
  },
};

export const getBundle: Operation = {
  operationId: 'getBundle',
  summary: "Whether the caller's workspace has this bundle (HEAD works too), so a client uploads only what is missing.",
  parameters: [SHA256],
  responses: {
    200: answer('The workspace has it.', holding('sha256', { type: 'string' })),
    400: error('`bad_request`: not a sha256, or a query parameter.'),
    401: UNAUTHORIZED,
    404: error('`not_found`: the workspace has not uploaded this bundle.'),
  },
};

/** The OpenAPI facts of the routes in bundle-artifact.ts, for docs/openapi.json (core/api/openapi.ts). */
import { error, SHA256 } from './shared.js';
import type { Operation } from './types.js';

export const getBundleArtifact: Operation = {
  operationId: 'getBundleArtifact',
  summary: "The stored tar.gz of a bundle, for Nomad's artifact downloader (HEAD gives the headers only). Public: the signed query (`expires`, `signature`) that svc puts in each job it submits is the only authorization; a bearer token does not replace it.",
  parameters: [
    SHA256,
    {
      name: 'expires',
      in: 'query',
      required: true,
      description: 'Unix time in seconds after which the URL is refused.',
      schema: { type: 'string', pattern: '^[0-9]{1,12}$' },
    },
    {
      name: 'signature',
      in: 'query',
      required: true,
      description: "Hex HMAC-SHA256 of `svc-artifact-v1\\n<sha256>\\n<expires>` with the server's artifact key.",
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
  ],
  responses: {
    200: {
      description: 'The bundle\'s bytes; `Content-Length`, `ETag: "<sha256>"`, `Cache-Control: private, max-age=0`.',
      content: { 'application/gzip': { schema: { type: 'string', contentEncoding: 'binary' } } },
    },
    400: error('`bad_request`: not a sha256, a query parameter other than `expires` and `signature`, or one of them twice.'),
    403: error("`artifact_url_invalid`: the URL has expired, or it was not signed by this server (missing, malformed or wrong `expires`/`signature`, another bundle's); `details.reason` says which."),
    404: error('`not_found`: no bundle with this sha256 is stored, or this server signs no artifact URLs (it does not run workloads on Nomad).'),
  },
};

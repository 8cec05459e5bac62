/** The OpenAPI facts of the routes in examples.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_QUERY, error, listOf, ref, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const listExamples: Operation = {
  operationId: 'listExamples',
  summary: 'The example projects the server ships, each with the first paragraph of its README (`svc example list`).',
  responses: {
    200: answer('Every example, sorted by name.', listOf('examples', ref('ExampleSummary'))),
    400: BAD_QUERY,
    401: UNAUTHORIZED,
  },
};

export const downloadExample: Operation = {
  operationId: 'downloadExample',
  summary: 'One example project as a gzip tarball of its files (`svc example download`).',
  parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$' } }],
  responses: {
    200: {
      description: 'The example\'s bundle: a deterministic tar.gz of its files and folders (no links), made like `python3 -m svc.bundle` (`.svcignore` honoured, caches left out). `Content-Disposition: attachment; filename="<name>.tar.gz"`; `X-Svc-Bundle-Sha256` is its sha256.',
      headers: { 'Content-Disposition': { schema: { type: 'string' } }, 'X-Svc-Bundle-Sha256': { schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } } },
      content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
    },
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    404: error('`not_found`: no example has this name; the message lists the examples, and `details.examples` holds their names.'),
  },
};

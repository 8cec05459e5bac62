/**
 * Code bundles, uploaded before a deploy names them by sha256: `POST
 * /bundles` streams the tar.gz into the store, checks it hashes to the
 * sha256 the client announced and is safe to extract, and records it for
 * the caller's workspace; `GET /bundles/:sha256` (and HEAD) says whether the
 * workspace has it, so a client uploads only what the server lacks.
 */
import { rm } from 'node:fs/promises';
import { SvcError } from '../../model/errors.js';
import { answer, error, holding, ref, SHA256_SCHEMA } from './openapi/shared.js';
import { asBundleTooLarge } from './upload.js';
import { WorkspaceBundles } from './workspace-bundles.js';
import { API_PREFIX, type ApiRoute, type ApiServices } from './types.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;
const SHA256_HEADER = 'x-bundle-sha256';

export const bundleRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/bundles',
    auth: 'token',
    body: 'bundle',
    openapi: {
      operationId: 'uploadBundle',
      summary:
        "Upload a code bundle (the tar.gz of `python3 -m svc.bundle`), checked against its sha256 and for safe extraction, and recorded for the caller's workspace.",
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
        400: error(
          '`bad_request`: X-Bundle-Sha256 missing or not a sha256, a Content-Type other than application/gzip, a query parameter.',
        ),
        413: error(
          "`bundle_too_large`: the upload is over the server's bundle limit (100 MiB by default), or an entry or the whole archive is over the extraction limits.",
        ),
        422: error(
          "`bundle_invalid`: the body's sha256 is not the one announced (the message names both), or the archive is not gzip, is corrupt, or holds an entry unsafe to extract (`details.entry`, `details.rule`).",
        ),
      },
    },
    async handle({ headers, upload, principal }, services) {
      const claimed = claimedSha256(headers[SHA256_HEADER]);
      const bundles = services.bundles;
      let stored;
      try {
        stored = await bundles.store.putStream(upload!(), claimed);
      } catch (error) {
        throw asBundleTooLarge(error, services.maxBundleBytes);
      }
      try {
        await bundles.unpack(stored.sha256);
      } catch (error) {
        // An archive that is unsafe to extract is not kept: nothing may deploy it later.
        await rm(stored.path, { force: true });
        throw error;
      }
      const created = await workspaceBundles(services).add(principal.workspace, stored.sha256, stored.size);
      return {
        status: created ? 201 : 200,
        body: { sha256: stored.sha256, size: stored.size, created },
        headers: { Location: `${API_PREFIX}/bundles/${stored.sha256}` },
      };
    },
  },
  {
    method: 'GET',
    path: '/bundles/:sha256',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getBundle',
      summary: "Whether the caller's workspace has this bundle (HEAD works too), so a client uploads only what is missing.",
      parameters: [
        {
          name: 'sha256',
          in: 'path',
          required: true,
          schema: SHA256_SCHEMA,
          refusal: { code: 'bad_request', refuse: (sha256) => notSha256(sha256, 'the path') },
        },
      ],
      responses: {
        200: answer('The workspace has it.', holding('sha256', { type: 'string' })),
        400: error('`bad_request`: not a sha256, or a query parameter.'),
        404: error('`not_found`: the workspace has not uploaded this bundle.'),
      },
    },
    async handle({ params, principal }, services) {
      const sha256 = params.sha256!;
      if (!(await workspaceBundles(services).has(principal.workspace, sha256))) throw unknownBundle(sha256);
      return { status: 200, body: { sha256 } };
    },
  },
];

export function workspaceBundles(services: ApiServices): WorkspaceBundles {
  return new WorkspaceBundles(services.controlPlane.store, services.bundles.store);
}

/** The `not_found` of a deploy or a check that names a bundle the workspace never uploaded. */
export function unknownBundle(sha256: string): SvcError {
  return new SvcError('not_found', `this workspace has no bundle ${sha256}.`, {
    hint: `Upload it first: POST ${API_PREFIX}/bundles with the tar.gz as the body and its sha256 in X-Bundle-Sha256.`,
    details: { sha256 },
  });
}

export function notSha256(value: unknown, where: string): SvcError {
  return new SvcError(
    'bad_request',
    `${where} names the bundle ${JSON.stringify(value)}, which is not a sha256 (64 lowercase hex digits).`,
    {
      hint: 'The sha256 of the tar.gz, as `python3 -m svc.bundle` prints it (or `sha256sum bundle.tar.gz`).',
    },
  );
}

function claimedSha256(header: string | string[] | undefined): string {
  if (header === undefined) {
    throw new SvcError('bad_request', 'the header X-Bundle-Sha256 is required: the sha256 of the bundle, checked once it has arrived.', {
      hint: 'Add -H "X-Bundle-Sha256: $(sha256sum bundle.tar.gz | cut -d" " -f1)".',
    });
  }
  const value = Array.isArray(header) ? header.join(',') : header.trim().toLowerCase();
  if (!SHA256_HEX.test(value)) throw notSha256(value, 'X-Bundle-Sha256');
  return value;
}

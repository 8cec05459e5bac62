/**
 * `GET /bundles/:sha256/artifact?expires=&signature=` (and HEAD): the stored
 * tar.gz of a bundle, for Nomad's artifact downloader, which holds no svc
 * token. The signature (core/infra/bundles/artifact-url.ts) is the route's only
 * authorization; a bearer token never stands in for it.
 *
 * `bundleArtifactMiddleware` answers GET and HEAD before the router: no
 * token, and in this order: a server that signs no URLs (404), query names
 * other than the signed ones (400), the declared parameters (a path that is
 * no sha256: 400; `expires` and `signature` missing or not of their shape:
 * 403, checked by their declarations as the router checks every route's),
 * then the signature and the expiry (403). The route is still declared in
 * `apiRoutes` (docs, OpenAPI, the 405 for other methods); its handler,
 * reached only without the middleware, refuses as a URL without a signature
 * would be refused.
 */
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { Middleware } from 'koa';
import { EXPIRES, notBundleSha256, SIGNATURE, unsigned, type ArtifactVerifier } from '../../infra/bundles/artifact-url.js';
import { SvcError } from '../../model/errors.js';
import { requestUrl } from '../../traffic/gateway/request-url.js';
import type { GatewayState } from '../../traffic/gateway/types.js';
import { error, SHA256_SCHEMA } from './openapi/shared.js';
import type { Refusal } from './openapi/types.js';
import { parameterCheck } from './declared-parameters.js';
import { apiPathRouter, routeParams } from './router.js';
import { API_PREFIX, type ApiRoute, type ApiServices } from './types.js';

const PATH = '/bundles/:sha256/artifact';
const QUERY = ['expires', 'signature'] as const;
/** A signed URL without its `expires` and `signature`, or with one not of its shape, was not signed by this server. */
const UNSIGNED: Refusal = { code: 'artifact_url_invalid', refuse: (value) => unsigned(value === undefined ? 'missing' : 'malformed') };

export const bundleArtifactRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: PATH,
    auth: 'none',
    body: 'none',
    openapi: {
      operationId: 'getBundleArtifact',
      summary:
        "The stored tar.gz of a bundle, for Nomad's artifact downloader (HEAD gives the headers only). Public: the signed query (`expires`, `signature`) that svc puts in each job it submits is the only authorization; a bearer token does not replace it.",
      parameters: [
        {
          name: 'sha256',
          in: 'path',
          required: true,
          schema: SHA256_SCHEMA,
          refusal: { code: 'bad_request', refuse: (sha256) => notBundleSha256(String(sha256)) },
        },
        {
          name: 'expires',
          in: 'query',
          required: true,
          description: 'Unix time in seconds after which the URL is refused.',
          schema: { type: 'string', pattern: EXPIRES.source },
          refusal: UNSIGNED,
        },
        {
          name: 'signature',
          in: 'query',
          required: true,
          description: "Hex HMAC-SHA256 of `svc-artifact-v1\\n<sha256>\\n<expires>` with the server's artifact key.",
          schema: { type: 'string', pattern: SIGNATURE.source },
          refusal: UNSIGNED,
        },
      ],
      responses: {
        200: {
          description: 'The bundle\'s bytes; `Content-Length`, `ETag: "<sha256>"`, `Cache-Control: private, max-age=0`.',
          content: { 'application/gzip': { schema: { type: 'string', contentEncoding: 'binary' } } },
        },
        400: error('`bad_request`: not a sha256, a query parameter other than `expires` and `signature`, or one of them twice.'),
        403: error(
          "`artifact_url_invalid`: the URL has expired, or it was not signed by this server (missing, malformed or wrong `expires`/`signature`, another bundle's); `details.reason` says which.",
        ),
        404: error(
          '`not_found`: no bundle with this sha256 is stored, or this server signs no artifact URLs (it does not run workloads on Nomad).',
        ),
      },
    },
    async handle({ params }, services) {
      signer(services).verify(params.sha256!, undefined, undefined);
      throw new SvcError('internal', 'bundle artifacts are served by bundleArtifactMiddleware, before the router');
    },
  },
];

/** Serves GET and HEAD of the artifact route; anything else goes on to the API's router. */
export function bundleArtifactMiddleware(services: ApiServices): Middleware<GatewayState> {
  const router = apiPathRouter();
  const checkParameters = parameterCheck(bundleArtifactRoutes[0]!);
  router.get(PATH, async (ctx) => {
    const params = routeParams(ctx);
    const sha256 = params.sha256!;
    const artifacts = signer(services);
    const query = requestUrl(ctx).searchParams;
    const { expires, signature } = signedQuery(query);
    await checkParameters({ params, query, workspace: null });
    artifacts.verify(sha256, expires, signature);
    const file = await openStored(services, sha256);
    let size: number;
    try {
      size = (await file.stat()).size;
    } catch (error) {
      await file.close();
      throw error;
    }
    ctx.status = 200;
    if (ctx.method === 'GET')
      ctx.body = file.createReadStream(); // closes the file when done; Koa destroys it if the client goes
    else await file.close();
    // After the body, so that nothing Koa's body setter does (a type of its own, dropping a length) wins.
    ctx.set({
      'Content-Type': 'application/gzip',
      'Content-Length': String(size),
      'Cache-Control': 'private, max-age=0',
      ETag: `"${sha256}"`,
    });
  });
  return router.routes() as Middleware<GatewayState>;
}

/** The signer, or `not_found` when this server signs no artifact URLs. */
function signer(services: ApiServices): ArtifactVerifier {
  if (services.artifacts === undefined) {
    throw new SvcError('not_found', 'this server serves no bundle artifact URLs: it signs them only when it runs workloads on Nomad.', {
      hint: `Upload and check bundles with POST and GET ${API_PREFIX}/bundles; a deploy runs them.`,
    });
  }
  return services.artifacts;
}

/** `expires` and `signature`, each at most once; any other parameter is `bad_request`, as on every route. */
function signedQuery(search: URLSearchParams): { expires?: string; signature?: string } {
  const query: { expires?: string; signature?: string } = {};
  for (const name of new Set(search.keys())) {
    if (!(QUERY as readonly string[]).includes(name)) {
      throw new SvcError(
        'bad_request',
        `an artifact URL takes only the query parameters ${QUERY.join(' and ')}, not ${JSON.stringify(name)}.`,
        {
          hint: 'Use the URL exactly as svc signed it.',
        },
      );
    }
    const values = search.getAll(name);
    if (values.length > 1)
      throw new SvcError('bad_request', `the query parameter ${name} appears ${values.length} times in this artifact URL.`, {
        hint: 'Use the URL exactly as svc signed it.',
      });
    query[name as (typeof QUERY)[number]] = values[0]!;
  }
  return query;
}

/** The stored file, opened before anything is answered, so a bundle deleted meanwhile is a clean 404. */
async function openStored(services: ApiServices, sha256: string): Promise<FileHandle> {
  try {
    return await open(services.bundles.store.pathOf(sha256), 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new SvcError('not_found', `no bundle ${sha256} is stored on this server.`, {
      hint: 'It was deleted since the job was submitted, or the URL names another server: redeploy so that svc uploads and signs it again.',
      details: { sha256 },
    });
  }
}

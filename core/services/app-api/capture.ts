/**
 * Reads an ASGI app's OpenAPI description from one of its containers while a
 * deploy starts it: `GET <source>` (FastAPI's `/openapi.json` by default)
 * with the workload's URL prefix as the gateway sends it, so the app sees
 * the root_path it will be served under. Bounded in time and size, and
 * never throws: a deploy goes on without it and says why (ApiOutcome).
 */
import type { Dispatcher } from 'undici';
import { normalizeApi, notOpenApi } from './normalize.js';
import { MAX_OPENAPI_BYTES, type ApiOutcome } from './types.js';

/** How long a deploy waits for the description, in all. */
export const CAPTURE_TIMEOUT_MS = 5_000;

export interface CaptureRequest {
  /** The app's path of the description (`/openapi.json`). */
  readonly source: string;
  /** The workload's URL prefix (`/default/shop/web`), sent as `x-forwarded-prefix`. */
  readonly prefix: string;
  /** The version of the workload being deployed. */
  readonly version: number;
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

/** One HTTP request to the container (undici's request API, as UpstreamPools#request offers it). */
export type ContainerRequest = (options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

export async function captureApi(send: ContainerRequest, request: CaptureRequest): Promise<ApiOutcome> {
  const { source, prefix } = request;
  const timeoutMs = request.timeoutMs ?? CAPTURE_TIMEOUT_MS;
  const maxBytes = request.maxBytes ?? MAX_OPENAPI_BYTES;
  const signal = AbortSignal.timeout(timeoutMs);
  const none = (why: string): ApiOutcome => ({ capture: null, message: `no OpenAPI description: ${source} ${why}` });
  let text: string;
  try {
    const response = await send({
      method: 'GET',
      path: source,
      signal,
      headers: {
        accept: 'application/json',
        'x-forwarded-prefix': prefix,
        'x-forwarded-proto': 'http',
        'user-agent': 'svc-deploy (OpenAPI capture)',
      },
    });
    if (response.statusCode !== 200) {
      await response.body.dump().catch(() => {});
      return none(`answered HTTP ${response.statusCode}`);
    }
    const length = Number(response.headers['content-length'] ?? NaN);
    if (length > maxBytes) {
      await response.body.dump().catch(() => {});
      return none(tooLarge(maxBytes));
    }
    const body = await readAtMost(response.body, maxBytes);
    if (body === null) return none(tooLarge(maxBytes));
    text = body.toString('utf8');
  } catch (error) {
    return none(signal.aborted ? `gave no answer within ${timeoutMs / 1000} s` : `could not be read (${(error as Error).message})`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return none('answered something that is not JSON');
  }
  const why = notOpenApi(document);
  if (why !== null) return none(`is no OpenAPI 3.x description: ${why}`);
  const capture = { version: request.version, source, capturedAt: new Date().toISOString(), document: document as Record<string, unknown> };
  const { api, skipped } = normalizeApi(capture);
  const count = `${api.operations.length} operation${api.operations.length === 1 ? '' : 's'}`;
  const left = skipped.length === 0 ? '' : `; left out: ${skipped.join('; ')}`;
  return { capture, message: `OpenAPI description captured from ${source}, ${count}${left}` };
}

function tooLarge(maxBytes: number): string {
  return `is larger than ${maxBytes / 1024} KiB, more than svc keeps (it is stored with the deployment, and a state value ends at 512 KiB)`;
}

/** The whole body, or null (the rest dropped) once it passes `maxBytes`. */
async function readAtMost(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

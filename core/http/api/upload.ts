/**
 * Raw bodies, streamed to their handler with the gateway's counting and
 * lingering close: bundle uploads (body kind `bundle`: `application/gzip`,
 * at most the bundle limit, past which the error is `bundle_too_large`),
 * remote calls (body kind `call`, call-route.ts: a pickled call, at most the
 * gateway's body limit, `payload_too_large` past it) and a map's inputs
 * (body kind `ndjson`: JSON lines, at most the gateway's body limit too).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';
import { formatBytes } from '../../model/format-bytes.js';
import { checkContentLength, countedBody } from '../../traffic/gateway/body-limit.js';
import { cutOffWhenIdle } from './idle-body.js';

/** Largest bundle the API takes unless the platform says otherwise; the SDK refuses projects above this size too. */
export const DEFAULT_MAX_BUNDLE_BYTES = 100 * 1024 * 1024;

const UPLOAD_TYPE = 'application/gzip';

/** A body of JSON lines (a map's inputs). */
export const NDJSON = 'application/x-ndjson';
export const NDJSON_HINT = 'Send one JSON object per line with "Content-Type: application/x-ndjson".';

/** A file's bytes as they are (a volume's file). */
export const OCTET_STREAM = 'application/octet-stream';
export const OCTET_STREAM_HINT =
  'Send the file as is with "Content-Type: application/octet-stream" (curl: --data-binary @file -H "Content-Type: application/octet-stream").';

/** Refuses a declared length above the limit before anything is read or authenticated. */
export function checkDeclaredUploadLength(req: IncomingMessage, res: ServerResponse, maxBytes: number): void {
  try {
    checkContentLength(req.headers['content-length'], req, res, maxBytes);
  } catch (error) {
    throw asBundleTooLarge(error, maxBytes);
  }
}

/** The body as a stream that fails with `payload_too_large` past `maxBytes` (the reader passes it through `asBundleTooLarge`); `bad_request` unless it is `application/gzip`. */
export function openUpload(req: IncomingMessage, res: ServerResponse, maxBytes: number): Readable {
  return openRawBody(
    req,
    res,
    maxBytes,
    UPLOAD_TYPE,
    'Send the tar.gz as is with "Content-Type: application/gzip" (curl: --data-binary @bundle.tar.gz -H "Content-Type: application/gzip").',
  );
}

/**
 * A raw body of one media type, counted against `maxBytes` and cut off after a long pause (idle-body.ts);
 * `bad_request` (with `hint`) for any other type.
 */
export function openRawBody(req: IncomingMessage, res: ServerResponse, maxBytes: number, type: string, hint: string): Readable {
  checkBodyType(req, type, hint);
  cutOffWhenIdle(req);
  return countedBody(req, res, maxBytes);
}

/** `bad_request` (with `hint`) unless the body is of media type `type`. */
export function checkBodyType(req: IncomingMessage, type: string, hint: string): void {
  const sent = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (sent !== type) {
    throw new SvcError(
      'bad_request',
      `the body has Content-Type ${sent === '' ? '(none)' : JSON.stringify(sent)}; this route takes ${type}.`,
      { hint, details: { contentType: sent } },
    );
  }
}

/** `payload_too_large` from the gateway's counter (the stream's error), said the way bundles say it; anything else as it is. */
export function asBundleTooLarge(error: unknown, maxBytes: number): unknown {
  if (!(error instanceof SvcError) || error.code !== 'payload_too_large') return error;
  return new SvcError('bundle_too_large', `the bundle is larger than the ${formatBytes(maxBytes)} this server accepts.`, {
    hint: 'Keep what the app does not need at run time out of the bundle with .svcignore.',
    details: { entry: null, rule: 'upload_too_large', maxBytes },
  });
}

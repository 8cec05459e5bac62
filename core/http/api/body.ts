/**
 * Reads a control-plane request body: at most 1 MiB (413 past it, whether
 * the length was declared or the body is chunked), JSON, or a form where the
 * route takes one (the OAuth endpoints). An empty body reads as `{}`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../../model/errors.js';
import { checkContentLength, readWholeBody } from '../../traffic/gateway/body-limit.js';

/** Control-plane bodies are small JSON documents; bundles will have their own upload route and limit. */
export const API_MAX_BODY_BYTES = 1024 * 1024;

export type BodyFormat = 'json' | 'json-or-form';

/** Refuses a declared length above the limit before anything is read or authenticated. */
export function checkDeclaredLength(req: IncomingMessage, res: ServerResponse): void {
  checkContentLength(req.headers['content-length'], req, res, API_MAX_BODY_BYTES);
}

export async function readBody(req: IncomingMessage, res: ServerResponse, format: BodyFormat): Promise<Record<string, unknown>> {
  const raw = (await readWholeBody(req, res, API_MAX_BODY_BYTES)).toString('utf8');
  if (raw.trim() === '') return {};
  const type = mediaType(req.headers['content-type']);
  if (type === 'application/json') return parseJsonObject(raw);
  if (type === 'application/x-www-form-urlencoded' && format === 'json-or-form') return parseForm(raw);
  throw new SvcError(
    'bad_request',
    `the request body has Content-Type ${type === '' ? '(none)' : JSON.stringify(type)}; this route takes ${format === 'json' ? 'JSON' : 'JSON or a form'}.`,
    {
      hint: 'Send "Content-Type: application/json" (curl -d sends application/x-www-form-urlencoded unless told otherwise: add -H "Content-Type: application/json").',
      details: { contentType: type },
    },
  );
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

function parseJsonObject(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new SvcError('invalid_json', `the request body is not valid JSON: ${(error as Error).message}`, {
      hint: 'Send one JSON object, e.g. {"name": "ci"}.',
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    throw new SvcError('bad_request', `the request body must be a JSON object, not ${kind}.`, {
      hint: 'Send one JSON object, e.g. {"name": "ci"}.',
    });
  }
  return value as Record<string, unknown>;
}

/** RFC 6749 §3.1: parameters must not appear more than once. */
function parseForm(raw: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    if (Object.hasOwn(fields, name))
      throw new SvcError('bad_request', `the parameter ${JSON.stringify(name)} appears more than once.`, { details: { field: name } });
    fields[name] = value;
  }
  return fields;
}

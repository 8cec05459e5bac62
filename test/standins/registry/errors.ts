/**
 * Registry errors as distribution serves them (registry/api/errcode/
 * register.go and handler.go): a JSON envelope `{"errors":[{code, message,
 * detail?}]}` with `Content-Type: application/json`, the HTTP status of the
 * first error, and Go's encoder's trailing newline.
 */
import type { ServerResponse } from 'node:http';

/** Code → [status, distribution's message]. */
const DESCRIPTORS = {
  UNKNOWN: [500, 'unknown error'],
  UNSUPPORTED: [405, 'The operation is unsupported.'],
  UNAUTHORIZED: [401, 'authentication required'],
  DENIED: [403, 'requested access to the resource is denied'],
  DIGEST_INVALID: [400, 'provided digest did not match uploaded content'],
  SIZE_INVALID: [400, 'provided length did not match content length'],
  RANGE_INVALID: [416, 'invalid content range'],
  NAME_INVALID: [400, 'invalid repository name'],
  TAG_INVALID: [400, 'manifest tag did not match URI'],
  NAME_UNKNOWN: [404, 'repository name not known to registry'],
  MANIFEST_UNKNOWN: [404, 'manifest unknown'],
  MANIFEST_INVALID: [400, 'manifest invalid'],
  MANIFEST_BLOB_UNKNOWN: [400, 'blob unknown to registry'],
  BLOB_UNKNOWN: [404, 'blob unknown to registry'],
  BLOB_UPLOAD_UNKNOWN: [404, 'blob upload unknown to registry'],
  BLOB_UPLOAD_INVALID: [404, 'blob upload invalid'],
  PAGINATION_NUMBER_INVALID: [400, 'invalid number of results requested'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof DESCRIPTORS;

export interface ErrorEntry {
  readonly code: ErrorCode;
  /** Replaces the registered message, as errcode's `WithMessage` does. */
  readonly message?: string;
  readonly detail?: unknown;
}

/** Thrown by handlers; the server answers it with `sendErrors`. */
export class RegistryError extends Error {
  readonly entries: readonly ErrorEntry[];
  /** Extra response headers (e.g. WWW-Authenticate). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(entries: ErrorEntry | readonly ErrorEntry[], headers: Record<string, string> = {}) {
    const list = Array.isArray(entries) ? (entries as readonly ErrorEntry[]) : [entries as ErrorEntry];
    super(list.map((entry) => entry.code).join(', '));
    this.entries = list;
    this.headers = headers;
  }

  get status(): number {
    const first = this.entries[0];
    return first === undefined ? 500 : DESCRIPTORS[first.code][0];
  }
}

export function registryError(code: ErrorCode, detail?: unknown, message?: string): RegistryError {
  return new RegistryError({ code, detail, message });
}

export function sendErrors(res: ServerResponse, error: RegistryError): void {
  if (res.headersSent) return;
  const errors = error.entries.map((entry) => {
    const body: { code: string; message: string; detail?: unknown } = {
      code: entry.code,
      message: entry.message ?? DESCRIPTORS[entry.code][1],
    };
    if (entry.detail !== undefined && entry.detail !== null) body.detail = entry.detail;
    return body;
  });
  const text = `${JSON.stringify({ errors })}\n`;
  res.writeHead(error.status, { ...error.headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

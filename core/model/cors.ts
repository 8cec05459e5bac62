/**
 * Cross-origin requests from browsers (`cors=svc.Cors(...)` on endpoints and realtime handlers): which
 * origins may call the workload's URL, with which methods and headers. The gateway answers their
 * preflights and adds the response headers (core/traffic/gateway/cors.ts); the SDK checks the same
 * rules at the decorator line (sdk/python/svc/_cors.py).
 */

export const CORS_LIMITS = Object.freeze({ origins: 64, headers: 64, maxAgeSeconds: 86_400 });
/** What a preflight may ask to send when the workload names nothing else: the token, and JSON bodies. */
export const DEFAULT_CORS_HEADERS: readonly string[] = Object.freeze(['authorization', 'content-type']);
export const DEFAULT_CORS_MAX_AGE = 600;
/** A header name (an RFC 9110 token) in lower case, as the manifest keeps it (header names are case-insensitive). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

export interface CorsSpec {
  /** Exact origins (`https://app.example.com`), or `*` for any. */
  readonly origins: readonly string[];
  /** The methods a page may use; null: the endpoint's own. */
  readonly methods: readonly string[] | null;
  /** Request headers a page may send, lower case. */
  readonly headers: readonly string[];
  /** Pages may send cookies and read the answer with them (never with `*`). */
  readonly credentials: boolean;
  /** Seconds a browser may keep a preflight's answer. */
  readonly maxAge: number;
}

/** What is wrong with `origin` as an allowed origin, or null: `*`, or `http(s)://host[:port]` and nothing more. */
export function corsOriginProblem(origin: string): string | null {
  if (origin === '*') return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'is not an origin: write the scheme and host, like "https://app.example.com"';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'is not an http or https origin';
  if (url.origin !== origin) {
    return `is not an origin: an origin is only scheme, host and port, like ${JSON.stringify(url.origin)} (no path, query, trailing "/" or upper case)`;
  }
  return null;
}

/** Whether a page of `origin` may call. */
export function corsAllows(cors: CorsSpec, origin: string): boolean {
  return cors.origins.includes(origin) || cors.origins.includes('*');
}

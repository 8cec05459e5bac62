/**
 * The form of a completion callback URL, wherever one is given: a spawn's `callbackUrl`, the
 * `X-Svc-Callback-Url` header, a workload's `callback_url` option (checked at deploy, from the
 * manifest). Where it points (loopback, private ranges, svc itself) is no part of its form: that
 * is checked when a call is made, after DNS (core/services/calls/callback-url.ts), so that a
 * deploy never resolves a name. The SDK checks the same form (sdk/python/svc/_options.py).
 */

export const MAX_CALLBACK_URL_LENGTH = 2048;

export const CALLBACK_URL_EXAMPLE = 'https://example.com/hooks/svc';

/** Why `raw` is not a callback URL's form (the end of a sentence about it), or null when it is one. */
export function callbackUrlProblem(raw: string): string | null {
  const length = callbackUrlLength(raw);
  if (length > MAX_CALLBACK_URL_LENGTH) return `it is ${length} characters long; at most ${MAX_CALLBACK_URL_LENGTH} are taken`;
  // URL() would drop tabs and line breaks and trim spaces: what svc stores must be what was written.
  if (/[\s\p{Cc}]/u.test(raw)) return 'it holds whitespace or a control character: percent-encode it (a space is %20)';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${JSON.stringify(raw.slice(0, 100))} is not an absolute URL (such as ${CALLBACK_URL_EXAMPLE})`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `its scheme is ${url.protocol}; svc POSTs callbacks over http: or https: only`;
  }
  // URL() also reads `http:host` and `https:///host`; the SDK reads what is written.
  if (!/^https?:\/\//i.test(raw)) return `it must begin with ${url.protocol}// and the host (such as ${CALLBACK_URL_EXAMPLE})`;
  const authority = authorityOf(raw);
  if (authority.includes('@')) {
    return 'it holds a user name or password (user:pass@host), which svc would store and show to everyone who may read the app or its calls: check the X-Svc-Signature header in your receiver instead';
  }
  if (authority === '' || authority.startsWith(':')) return 'it has no host';
  return null;
}

/** Its length in characters (code points), as the manifest schema's `maxLength` and Python's `len` count them. */
export function callbackUrlLength(raw: string): number {
  return raw.length > MAX_CALLBACK_URL_LENGTH * 2 ? raw.length : [...raw].length;
}

/** The text between `scheme://` and the path, query or fragment, as written (a URL reader would also stop at a backslash). */
function authorityOf(raw: string): string {
  return raw.slice(raw.indexOf('//') + 2).split(/[/?#\\]/, 1)[0] ?? '';
}

/**
 * `WWW-Authenticate` challenges of registries (RFC 7235 auth-params), as the
 * distribution token spec uses them: `Bearer realm="…",service="…",scope="…"`
 * sends the client to a token server; `Basic realm="…"` wants credentials on
 * every request.
 */
export interface Challenge {
  readonly scheme: 'bearer' | 'basic';
  readonly params: Readonly<Record<string, string>>;
}

export function parseChallenge(header: string | string[] | undefined): Challenge | null {
  const text = Array.isArray(header) ? header.join(', ') : (header ?? '');
  const match = /^\s*(Bearer|Basic)\b\s*(.*)$/i.exec(text);
  if (!match) return null;
  const params: Record<string, string> = {};
  // name="quoted, with \" escapes" or name=token, separated by commas.
  const param = /([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g;
  for (let found = param.exec(match[2]!); found; found = param.exec(match[2]!)) {
    params[found[1]!.toLowerCase()] = found[2] !== undefined ? found[2].replace(/\\(.)/g, '$1') : found[3]!;
  }
  return { scheme: match[1]!.toLowerCase() as Challenge['scheme'], params };
}

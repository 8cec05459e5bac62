/**
 * `GET /v2/<name>/tags/list[?n=&last=]` (registry/handlers/tags.go): the
 * tags in Go's sort.Strings order, `n` of them after `last` with a `Link:
 * <…>; rel="next"` when more remain; a repository with no tags is 404
 * NAME_UNKNOWN; a bad `n` is 400 PAGINATION_NUMBER_INVALID.
 */
import type { Call, RegistryContext } from './context.js';
import { registryError } from './errors.js';
import { methodNotAllowed } from './methods.js';

export function handleTagsList(call: Call, context: RegistryContext, name: string): void {
  if (call.method !== 'GET' && call.method !== 'HEAD') return methodNotAllowed(call, ['GET', 'HEAD']);
  const last = call.query.get('last') ?? '';
  let limit = -1;
  const n = call.query.get('n');
  if (n !== null && n !== '') {
    limit = /^\d+$/.test(n) ? Number(n) : NaN;
    if (Number.isNaN(limit)) throw registryError('PAGINATION_NUMBER_INVALID', { n: 0 });
  }
  let tags: string[] = [];
  let more = false;
  if (limit !== 0) {
    const all = [...(context.store.find(name)?.tags.keys() ?? [])];
    if (all.length === 0) throw registryError('NAME_UNKNOWN', { name });
    // Byte order, as Go compares strings (not localeCompare).
    const after = all.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).filter((tag) => last === '' || tag > last);
    tags = limit < 0 ? after : after.slice(0, limit);
    more = limit > 0 && after.length > limit;
  }
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json' };
  if (more) headers.Link = `</v2/${name}/tags/list?last=${encodeURIComponent(tags[tags.length - 1]!)}&n=${limit}>; rel="next"`;
  const body = `${JSON.stringify({ name, tags })}\n`;
  headers['Content-Length'] = Buffer.byteLength(body);
  call.res.writeHead(200, headers).end(call.method === 'HEAD' ? undefined : body);
}

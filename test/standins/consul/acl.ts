/**
 * What the Consul stand-in answers a request without a token when ACLs are on
 * with default deny (the anonymous token has no rights), as a Consul 1.21.4
 * dev agent does: a call that names one resource is refused with 403 and
 * Consul's text naming the permission and the resource; a read that lists
 * (KV `?recurse`/`?keys`, health) is not refused but filtered to nothing.
 */
import { sendJson, sendText, setMeta, type Call } from './http.js';
import { NODE_NAME, type ConsulState } from './state.js';

const ANONYMOUS_NOTE = 'The anonymous token is used implicitly when a request does not specify a token.';

export function answerAnonymous(call: Call, state: ConsulState): void {
  const deny = (permission: string, resource: string): void =>
    sendText(
      call.res,
      403,
      `Permission denied: anonymous token lacks permission '${permission}' on ${JSON.stringify(resource)}. ${ANONYMOUS_NOTE}`,
    );
  const { path, method, query } = call;
  if (path.startsWith('/v1/kv/')) {
    const key = path.slice('/v1/kv/'.length);
    if (method !== 'GET') return deny('key:write', key);
    if (!query.has('recurse') && !query.has('keys')) return deny('key:read', key);
    // Filtered: as if nothing were stored (a root ?keys is [], any other empty listing 404).
    setMeta(call.res, state.kvPrefixIndex(key));
    if (query.has('keys') && key === '') return sendJson(call.res, []);
    call.res.writeHead(404).end();
    return;
  }
  if (path.startsWith('/v1/health/service/')) {
    setMeta(call.res, state.serviceIndex(path.slice('/v1/health/service/'.length)));
    return sendJson(call.res, []);
  }
  if (path.startsWith('/v1/session/renew/') && !state.sessions.has(path.slice('/v1/session/renew/'.length))) {
    // The session is looked up before the ACL check.
    return sendText(call.res, 404, `Session id '${path.slice('/v1/session/renew/'.length)}' not found`);
  }
  if (/^\/v1\/session\/(create|renew|destroy)\b/.test(path)) return deny('session:write', NODE_NAME);
  if (path.startsWith('/v1/agent/service/deregister/')) {
    const id = path.slice('/v1/agent/service/deregister/'.length);
    const service = state.services.get(id);
    if (service === undefined)
      return sendText(
        call.res,
        404,
        `Unknown service ID ${JSON.stringify(id)}. Ensure that the service ID is passed, not the service name.`,
      );
    return deny('service:write', service.Service);
  }
  if (path === '/v1/agent/service/register') {
    let name = '';
    try {
      name = String((JSON.parse(call.body.toString('utf8')) as { Name?: unknown }).Name ?? '');
    } catch {
      // an undecodable body is refused for the permission all the same
    }
    return deny('service:write', name);
  }
  sendText(call.res, 403, `Permission denied: anonymous token lacks permission. ${ANONYMOUS_NOTE}`);
}

import { SvcError } from '../../model/errors.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import type { Principal } from '../../model/principal.js';
import type { AuthRequest } from '../../infra/plugin/types.js';
import { nothingAnswers } from './nothing-answers.js';
import type { RouteEntry } from './types.js';

export interface AccessRequest {
  readonly plugins: PluginHost;
  /** The workload the URL names, or undefined when no route matched. */
  readonly entry: RouteEntry | undefined;
  readonly headers: AuthRequest['headers'];
  /** The request's URL, or how to parse it: then only a hook that reads `url` pays for the parse (svc's token check does not). */
  readonly url: URL | (() => URL);
  readonly transport: AuthRequest['transport'];
  /** Check the token even on a public workload (a request it defers must have an owner who can read the outcome). */
  readonly evenIfPublic?: boolean;
}

/** The principal, or a promise of it when a hook answered asynchronously (the request path awaits only then). */
export type Access = Principal | null | Promise<Principal | null>;

/**
 * Who may reach a workload URL, the same for HTTP and WebSocket: public
 * workloads need nothing; everything else, unknown URLs included (so nobody
 * can probe which apps exist), needs a principal from an `authenticate`
 * hook, and a principal of another workspace sees a 404. Synchronous when
 * the hooks are (svc's own token check is a lookup in memory): see `Access`.
 */
export function checkAccess(request: AccessRequest): Access {
  const { entry } = request;
  if (entry && entry.workload.http?.authorized === false && !request.evenIfPublic) return null;
  const auth = authRequest(request);
  const found = request.plugins.firstNow('authenticate', auth);
  return found instanceof Promise ? found.then((principal) => judge(request, auth, principal)) : judge(request, auth, found);
}

function judge(request: AccessRequest, auth: AuthRequest, principal: Principal | null): Principal {
  if (!principal) throw unauthorized(request.headers.authorization !== undefined);
  // Word for word what an unknown URL gets: another workspace's workloads are not even said to exist.
  if (request.entry && principal.workspace !== request.entry.ref.workspace) throw nothingAnswers(auth.url.pathname);
  return principal;
}

function unauthorized(tokenSent: boolean): SvcError {
  return new SvcError(
    'unauthorized',
    tokenSent
      ? 'the bearer token is invalid, expired or revoked.'
      : 'this URL needs a bearer token: send the header "Authorization: Bearer <token>".',
    {
      hint: 'Use a token of the workspace (svc serve prints where the owner token is), or deploy the workload with authorized=False to make it public.',
      headers: { 'WWW-Authenticate': tokenSent ? 'Bearer error="invalid_token"' : 'Bearer' },
    },
  );
}

/** What the hooks see; a URL given as a parser is parsed on first read, once. */
function authRequest(request: AccessRequest): AuthRequest {
  const { headers, url, transport } = request;
  const workspace = request.entry?.ref.workspace ?? '';
  return typeof url === 'function' ? new LazyAuthRequest(headers, workspace, transport, url) : { headers, url, workspace, transport };
}

/** A class, not an object literal with a getter: V8 builds such literals on a slow path, on every request. */
class LazyAuthRequest implements AuthRequest {
  #url: URL | undefined;
  readonly #parse: () => URL;

  constructor(
    readonly headers: AuthRequest['headers'],
    readonly workspace: string,
    readonly transport: AuthRequest['transport'],
    parse: () => URL,
  ) {
    this.#parse = parse;
  }

  get url(): URL {
    return (this.#url ??= this.#parse());
  }
}

/**
 * Authentication, as distribution's access controllers do it:
 *
 * - token (registry/auth/token/accesscontroller.go, docs/content/spec/auth/
 *   token.md): without a valid `Authorization: Bearer` token → 401
 *   UNAUTHORIZED with `WWW-Authenticate: Bearer realm="…",service="…",
 *   scope="repository:<name>:pull,push"` (one space-separated scope per
 *   repository the request touches), plus `error="invalid_token"` for an
 *   unknown or expired token and `error="insufficient_scope"` when the
 *   token lacks an action. Tokens come from `GET /token` on the same server.
 * - basic (registry/auth/htpasswd/access.go): `WWW-Authenticate: Basic
 *   realm="Registry Realm"` unless `Authorization: Basic` names a known user.
 *
 * The 401 body's detail lists the access records, as app.go's `authorized` does.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RegistryError } from './errors.js';
import type { Route } from './names.js';

export interface AuthOptions {
  readonly mode: 'token' | 'basic';
  /** username → password */
  readonly users: Record<string, string>;
  /** token mode: anonymous tokens may pull (Docker Hub style). */
  readonly anonymousPull?: boolean;
}

export type Action = 'pull' | 'push' | 'delete';

export interface Access {
  readonly name: string;
  readonly action: Action;
}

/** The `service` the challenge names and tokens must be issued for. */
export const TOKEN_SERVICE = 'registry.standin';
export const TOKEN_TTL_SECONDS = 300;
export const BASIC_REALM = 'Registry Realm';

interface IssuedToken {
  readonly service: string;
  readonly expiresAt: number;
  readonly grants: ReadonlyMap<string, ReadonlySet<Action>>;
}

/** app.go appendAccessRecords: GET/HEAD pull; POST/PUT/PATCH pull+push; DELETE delete; a `from` repository needs pull. */
export function accessFor(method: string, route: Route, from: string | null): Access[] {
  if (route.kind === 'base' || route.kind === 'slash') return [];
  const records: Access[] = [];
  const append = (name: string, verb: string): void => {
    if (verb === 'GET' || verb === 'HEAD') records.push({ name, action: 'pull' });
    else if (verb === 'POST' || verb === 'PUT' || verb === 'PATCH') records.push({ name, action: 'pull' }, { name, action: 'push' });
    else if (verb === 'DELETE') records.push({ name, action: 'delete' });
  };
  append(route.name, method);
  if (from !== null && from !== '') append(from, 'GET');
  return records;
}

export class Authenticator {
  private readonly tokens = new Map<string, IssuedToken>();

  constructor(
    private readonly options: AuthOptions | undefined,
    private readonly realm: () => string,
  ) {}

  /** Throws the 401 challenge when the request may not do `access`. */
  authorize(req: IncomingMessage, access: readonly Access[]): void {
    if (this.options === undefined) return;
    if (this.options.mode === 'basic') return this.authorizeBasic(req, access);
    return this.authorizeBearer(req, access);
  }

  private authorizeBasic(req: IncomingMessage, access: readonly Access[]): void {
    if (this.basicUser(req) !== undefined) return;
    throw this.unauthorized(access, `Basic realm=${quote(BASIC_REALM)}`);
  }

  private authorizeBearer(req: IncomingMessage, access: readonly Access[]): void {
    const [scheme, raw] = splitAuthorization(req);
    const challenge = (error?: string): RegistryError => {
      let header = `Bearer realm=${quote(this.realm())},service=${quote(TOKEN_SERVICE)}`;
      const scope = scopeParam(access);
      if (scope !== '') header += `,scope=${quote(scope)}`;
      if (error !== undefined) header += `,error=${quote(error)}`;
      return this.unauthorized(access, header);
    };
    if (scheme?.toLowerCase() !== 'bearer' || raw === undefined || raw === '') throw challenge();
    const token = this.tokens.get(raw);
    // An unknown token, one past its expiry, or one issued for another service (audience) is invalid.
    if (token === undefined || token.expiresAt <= Date.now() || token.service !== TOKEN_SERVICE) throw challenge('invalid_token');
    for (const { name, action } of access) {
      if (token.grants.get(name)?.has(action) !== true) throw challenge('insufficient_scope');
    }
  }

  private unauthorized(access: readonly Access[], header: string): RegistryError {
    const detail = access.map(({ name, action }) => ({ Type: 'repository', Class: '', Name: name, Action: action }));
    return new RegistryError({ code: 'UNAUTHORIZED', detail }, { 'WWW-Authenticate': header });
  }

  /** The user named by valid Basic credentials; `undefined` when absent or wrong. */
  private basicUser(req: IncomingMessage): string | undefined {
    const [scheme, raw] = splitAuthorization(req);
    if (scheme?.toLowerCase() !== 'basic' || raw === undefined) return undefined;
    const decoded = Buffer.from(raw, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    return Object.hasOwn(this.options?.users ?? {}, user) && this.options?.users[user] === password ? user : undefined;
  }

  /**
   * `GET /token?service=…&scope=…` (token.md "Requesting a Token"): grants
   * the intersection of what was asked and what the client may do — a known
   * user pull and push on any repository, an anonymous client pull when
   * `anonymousPull` — and an empty grant is not an error. Wrong credentials
   * are 401.
   */
  handleTokenRequest(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method Not Allowed\n');
      return;
    }
    const [scheme] = splitAuthorization(req);
    let allowed: ReadonlySet<Action>;
    if (scheme === undefined) {
      allowed = new Set<Action>(this.options?.anonymousPull === true ? ['pull'] : []);
    } else if (this.basicUser(req) !== undefined) {
      allowed = new Set<Action>(['pull', 'push']);
    } else {
      const body = JSON.stringify({ details: 'incorrect username or password' });
      res.writeHead(401, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
      return;
    }
    const grants = new Map<string, Set<Action>>();
    for (const scope of query
      .getAll('scope')
      .flatMap((value) => value.split(' '))
      .filter((value) => value !== '')) {
      const parsed = parseScope(scope);
      if (parsed === undefined) continue;
      const granted = grants.get(parsed.name) ?? new Set<Action>();
      for (const action of parsed.actions) if (allowed.has(action as Action)) granted.add(action as Action);
      grants.set(parsed.name, granted);
    }
    const token = randomBytes(24).toString('base64url');
    const issuedAt = new Date();
    this.tokens.set(token, { service: query.get('service') ?? '', expiresAt: issuedAt.getTime() + TOKEN_TTL_SECONDS * 1000, grants });
    const body = JSON.stringify({ token, access_token: token, expires_in: TOKEN_TTL_SECONDS, issued_at: issuedAt.toISOString() });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
  }
}

/** `repository:<name>:<actions>`; a name may hold a `:` (host:port), so the actions follow the last one. */
function parseScope(scope: string): { name: string; actions: string[] } | undefined {
  const first = scope.indexOf(':');
  const last = scope.lastIndexOf(':');
  if (first < 0 || last === first || scope.slice(0, first) !== 'repository') return undefined;
  return { name: scope.slice(first + 1, last), actions: scope.slice(last + 1).split(',') };
}

/** accessSet.scopeParam: one `repository:<name>:<actions>` per repository, joined by spaces. */
function scopeParam(access: readonly Access[]): string {
  const byName = new Map<string, Action[]>();
  for (const { name, action } of access) {
    const actions = byName.get(name) ?? [];
    if (!actions.includes(action)) actions.push(action);
    byName.set(name, actions);
  }
  return [...byName].map(([name, actions]) => `repository:${name}:${actions.join(',')}`).join(' ');
}

function splitAuthorization(req: IncomingMessage): [string | undefined, string | undefined] {
  const header = req.headers.authorization;
  if (header === undefined) return [undefined, undefined];
  const space = header.indexOf(' ');
  return space < 0 ? [header, undefined] : [header.slice(0, space), header.slice(space + 1).trim()];
}

/** Go's %q for the plain ASCII values used here. */
function quote(value: string): string {
  return JSON.stringify(value);
}

/**
 * Sign-in links. `POST /api/v1/sign-in` trades the one-time secret of a link
 * (`<base>/login#<secret>`, printed by `svc server` on first start) for a
 * session: a token of the account's workspace that expires after 12 hours.
 * Public, since it is how one gets a credential; the secret is 256 random
 * bits and works once. `POST /api/v1/sign-in-links` makes a fresh link for
 * the caller's own account (`svc dashboard`), so nobody needs the first one again.
 */
import type { TokenInfo } from '../../services/auth/token-records.js';
import { SvcError } from '../../model/errors.js';
import { answer, BAD_JSON_BODY, error, json, ref } from './openapi/shared.js';
import { NO_STORE, type ApiRoute } from './types.js';

export const SESSION_LIFETIME_MS = 12 * 60 * 60_000;

export interface SignInAnswer extends TokenInfo {
  readonly secret: string;
  readonly account: { readonly id: string; readonly name: string; readonly role: string };
}

export const signInRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/sign-in',
    auth: 'none',
    body: 'json',
    // Secrets are 256 random bits, so guessing is futile anyway; this keeps the attempts cheap.
    rateLimit: { burst: 30, perMinute: 30 },
    openapi: {
      operationId: 'signIn',
      summary: "Trade a one-time sign-in link's secret for a 12-hour session token. Public.",
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['secret'],
          additionalProperties: false,
          properties: { secret: { type: 'string', description: 'The part of the link after `#`.' } },
        }),
      },
      responses: {
        200: answer('The session token with its secret.', ref('SignIn')),
        400: BAD_JSON_BODY,
        401: error('`unauthorized`: the link is invalid, expired or already used.'),
      },
    },
    async handle({ body }, { controlPlane }) {
      const account = await controlPlane.signIn.consume(body.secret as string);
      const workspace = account.workspaces[0];
      if (workspace === undefined) throw new SvcError('forbidden', `the account ${account.id} may use no workspace, so it cannot sign in.`);
      if (account.joinedAt === null) await controlPlane.members.joined(account.id);
      const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS).toISOString();
      const { secret, token } = await controlPlane.tokens.create(
        { name: 'dashboard session', expiresAt },
        { workspace, subject: account.id },
      );
      const answer: SignInAnswer = { ...token, secret, account: { id: account.id, name: account.name, role: account.role } };
      return { status: 200, body: answer, headers: NO_STORE };
    },
  },
  {
    method: 'POST',
    path: '/sign-in-links',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'createSignInLink',
      summary: "A fresh one-time dashboard sign-in link for the caller's own account (`svc dashboard`).",
      requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
      responses: {
        201: answer("The link's path (append it to the server's URL), when it expires, and whose it is.", ref('SignInLink')),
        400: error('`bad_request` (an unknown field, a body that is not a JSON object) or `invalid_json`.'),
        401: error('`unauthorized`: no valid token.'),
        403: error('`forbidden`: the token acts as no account.'),
      },
    },
    async handle({ principal }, { controlPlane }) {
      const account = await controlPlane.accounts.get(principal.subject);
      if (account === null) {
        throw new SvcError(
          'forbidden',
          `the token acts as ${JSON.stringify(principal.subject)}, which is no account, so there is nobody to sign in.`,
          {
            hint: 'Use a token of a person: one made by `svc login`, by the dashboard, or the owner token.',
          },
        );
      }
      const { secret, expiresAt } = await controlPlane.signIn.issue(account.id);
      const answer: SignInLinkAnswer = { path: `/login#${secret}`, expiresAt, account: { id: account.id, name: account.name } };
      return { status: 201, body: answer, headers: NO_STORE };
    },
  },
];

export interface SignInLinkAnswer {
  /** Relative to the server's URL: `<server>/login#<secret>`. Works once, for 15 minutes. */
  readonly path: string;
  readonly expiresAt: string;
  readonly account: { readonly id: string; readonly name: string };
}

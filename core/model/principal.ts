/**
 * Auth's shapes: who a request acts for. The plugin API names it (an
 * `authenticate` hook returns one) and re-exports it from here.
 */

/** Who made a request, as established by an `authenticate` hook. */
export interface Principal {
  /** The workspace the credential belongs to. The gateway refuses requests to other workspaces. */
  readonly workspace: string;
  /** Who acts: a user name, `owner`, a service account… Shown in logs and events. */
  readonly subject: string;
  /** Non-secret id of the token used (`tok_…`), when a token was used. */
  readonly tokenId?: string;
}

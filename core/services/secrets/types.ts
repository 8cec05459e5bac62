/** Secrets: named sets of KEY=VALUE pairs of one workspace, sealed at rest (core/services/secrets/secrets.ts). */

/** A secret as anyone may see it: its keys, never its values. */
export interface SecretView {
  readonly name: string;
  readonly keys: readonly string[];
  readonly createdAt: string;
  /** The account (or other principal) that created it; null when svc did (an app's inline values). */
  readonly createdBy: string | null;
  readonly updatedAt: string;
  readonly updatedBy: string | null;
}

/** What the store keeps: every value sealed (keyring.ts) for its workspace, secret and key. */
export interface SecretRecord extends SecretView {
  readonly workspace: string;
  readonly sealed: Readonly<Record<string, string>>;
}

/**
 * Where an app's inline values (`svc.Secret.from_dict`) are kept: one deployment of an app
 * (`stage` `deployed`, a preview's) or one remote run (its id). A workload names them `@<i>`.
 */
export interface InlineScope {
  readonly workspace: string;
  readonly app: string;
  readonly stage: string;
}

/** What a deploy needs of secrets: that they exist, and their values for the workers' environment. */
export interface SecretEnvironment {
  /** `secret_not_found` (422) naming every named secret of `names` the workspace does not have (`@<i>` are the scope's). */
  check(workspace: string, names: readonly string[]): Promise<void>;
  /** The variables of the secrets, in order (a later secret's key wins); checks like `check`. */
  environment(scope: InlineScope, names: readonly string[]): Promise<Record<string, string>>;
  /** Keeps the inline values of a deploy (or run), sealed, in place of the scope's earlier ones. */
  putInline(scope: InlineScope, values: readonly Readonly<Record<string, string>>[]): Promise<void>;
  /** Deletes the scope's inline values (its app or run is gone). */
  forgetInline(scope: InlineScope): Promise<void>;
}

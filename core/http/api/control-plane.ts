/**
 * The durable side of the control plane: the state store and the services
 * on it (workspaces, accounts, tokens, sign-in links, device flow), set up
 * the way a first start needs them — `default`, the owner account, the owner
 * token registered — and the same way on every later start.
 */
import { Accounts } from '../../services/accounts/accounts.js';
import { SignInLinks, type IssuedSignIn } from '../../services/accounts/sign-in.js';
import type { Account } from '../../services/accounts/types.js';
import { DeviceAuthorizations } from '../../services/auth/device-flow.js';
import { StoreTokenVerifier } from '../../services/auth/store-verifier.js';
import type { PlatformMetrics } from '../../infra/metrics/platform-metrics.js';
import { timedStore } from '../../infra/metrics/timed-store.js';
import { TokenIndex } from '../../services/auth/token-index.js';
import { Tokens, type OwnerTokenStatus } from '../../services/auth/token-service.js';
import { ConsulStateStore, type ConsulStateStoreOptions } from '../../infra/state/consul-store.js';
import { openFileStateStore } from '../../infra/state/file-store.js';
import { checkDataFormat, DATA_FORMAT, type FormatCheck } from '../../services/data-format/data-format.js';
import { createMemoryStateStore } from '../../infra/state/memory-store.js';
import type { StateStore } from '../../model/store/types.js';
import { Workspaces } from '../../services/workspaces/workspaces.js';
import { startSweeper } from './sweeper.js';
import { Sessions } from '../../services/accounts/sessions.js';
import { Members } from '../../services/members/members.js';
import type { Principal } from '../../infra/plugin/types.js';
import { openKeySource, type KeySettings } from '../../services/secrets/key-source.js';
import { Secrets } from '../../services/secrets/secrets.js';
import { CallbackSecrets } from '../../services/secrets/callback-secrets.js';

/**
 * `file`: `<data dir>/state`, durable and locked to one process; `consul`:
 * Consul KV, shared by every svc replica; `memory`: nothing kept (previews).
 */
export type StateKind = 'file' | 'consul' | 'memory';

export interface ControlPlaneOptions {
  readonly dataDir: string;
  readonly state: StateKind;
  /** Where the `consul` store lives. */
  readonly consul?: ConsulStateStoreOptions;
  /** The secret of `<data dir>/owner-token`, registered as the owner's token of `default`. */
  readonly ownerSecret: string;
  /** The device-flow page, known once the server listens. */
  readonly verificationUri: () => string;
  /** Told about failures nobody waits for (a sweep, the token index's watch). */
  readonly report: (error: unknown) => void;
  /** Where the keys that seal secrets come from (core/services/secrets/key-source.ts); absent: the store's default. */
  readonly secretsKeys?: KeySettings;
  /** Times the store's calls (`/metrics`). */
  readonly metrics?: PlatformMetrics;
}

export interface ControlPlane {
  readonly store: StateStore;
  readonly workspaces: Workspaces;
  readonly accounts: Accounts;
  readonly tokens: Tokens;
  readonly verifier: StoreTokenVerifier;
  readonly signIn: SignInLinks;
  /** The dashboard's browser sessions. */
  readonly sessions: Sessions;
  /** Workspaces' members and invitations. */
  readonly members: Members;
  readonly devices: DeviceAuthorizations;
  /** Workspaces' secrets, sealed with keys kept outside the store. */
  readonly secrets: Secrets;
  /** Workspaces' signing secrets of completion callbacks, sealed with the same keys. */
  readonly callbackSecrets: CallbackSecrets;
  readonly owner: { readonly account: Account; readonly created: boolean };
  /** `revoked` means the owner-token file no longer works: delete it and restart to get a new one. */
  readonly ownerTokenStatus: OwnerTokenStatus;
  /** A one-time dashboard sign-in for the owner, issued only when this start created the owner account. */
  readonly firstSignIn: IssuedSignIn | null;
  /** What opening the store found and repaired (a stale lock taken over, a torn write dropped). */
  readonly warnings: readonly string[];
  /** What the embedded store lets go of before it refuses a write for a full disk (the logs' older segments). */
  makeRoomForState(makeRoom: () => Promise<number>): void;
  /** Stops the sweeper and the token index's watch, then closes the store. */
  close(): Promise<void>;
}

/** How often expired device codes, sign-in links and sessions are deleted, and token uses written. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Opens the store (`state_locked` when another svc holds it) and the services.
 * On any failure what was opened is closed again, so the lock is released.
 */
export async function openControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  // First: a Consul store without a secrets key refuses to start before anything opens.
  const keys = await openKeySource({
    ...(options.secretsKeys ?? { secretsKey: null, secretsKeyFile: null }),
    dataDir: options.dataDir,
    state: options.state,
  });
  const fileStore = options.state === 'file' ? await openFileStateStore({ dataDir: options.dataDir }) : null;
  const opened: StateStore =
    fileStore ?? (options.state === 'consul' ? new ConsulStateStore(consulOptions(options)) : createMemoryStateStore());
  const store = options.metrics === undefined ? opened : timedStore(opened, options.metrics);
  let index: TokenIndex | undefined;
  try {
    // Before any service reads or writes the store: what it holds must be in a format this svc reads.
    const format = await checkDataFormat(store, async (from) =>
      fileStore === null ? null : fileStore.copyLog(`before-data-format-${from + 1}-${Date.now()}`),
    );
    const workspaces = new Workspaces(store);
    await workspaces.ensureDefault();
    const accounts = new Accounts(store);
    const owner = await accounts.ensureOwner();
    index = await TokenIndex.open(store, { onError: options.report });
    // An account removed from a workspace gets no new token there; other plugins' principals are not accounts.
    const mayAct = async (principal: Principal) => {
      const account = await accounts.get(principal.subject);
      return account === null ? !principal.subject.startsWith('acc_') : account.workspaces.includes(principal.workspace);
    };
    const tokens = new Tokens(store, index, workspaces, undefined, mayAct);
    const { status: ownerTokenStatus } = await tokens.registerOwnerToken(options.ownerSecret, owner.account);
    const signIn = new SignInLinks(store, accounts);
    const sessions = new Sessions(store);
    const members = new Members({ workspaces, accounts, signIn, sessions, tokens });
    const devices = new DeviceAuthorizations(store, tokens, { verificationUri: options.verificationUri });
    const secrets = new Secrets(store, keys);
    const callbackSecrets = new CallbackSecrets(store, keys);
    const firstSignIn = owner.created ? await signIn.issue(owner.account.id) : null;
    const sweeper = startSweeper(
      [() => devices.sweep(), () => signIn.sweep(), () => sessions.sweep(), () => tokens.usage.flush()],
      SWEEP_INTERVAL_MS,
      options.report,
    );
    const opened = index;
    return {
      store,
      workspaces,
      accounts,
      tokens,
      signIn,
      sessions,
      members,
      devices,
      secrets,
      callbackSecrets,
      owner,
      ownerTokenStatus,
      firstSignIn,
      verifier: new StoreTokenVerifier(index, undefined, tokens.usage),
      warnings: [...(fileStore?.warnings ?? []), ...formatWarnings(format)],
      makeRoomForState: (makeRoom) => fileStore?.makeRoomWith(makeRoom),
      async close() {
        await sweeper.stop();
        // The last minute's token uses, before the store closes.
        await tokens.usage.flush().catch(options.report);
        await opened.close();
        await store.close();
      },
    };
  } catch (error) {
    await index?.close();
    await store.close();
    throw error;
  }
}

function consulOptions(options: ControlPlaneOptions): ConsulStateStoreOptions {
  if (options.consul === undefined) throw new Error('openControlPlane: state "consul" needs the consul options');
  return options.consul;
}

/** What a migration of the data format did, for the operator (svc server prints warnings at start). */
function formatWarnings(format: FormatCheck): string[] {
  if (format.steps.length === 0) return [];
  const copy =
    format.backup === null
      ? 'take a backup of Consul KV before upgrading (docs/operators.md, "Upgrades")'
      : `the state log before it is kept at ${format.backup}`;
  return [`migrated svc's data from data format ${format.from} to ${DATA_FORMAT} (${format.steps.join('; ')}); ${copy}`];
}

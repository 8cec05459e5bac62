/** Shared set-up for the auth tests: real state stores, a clock the test moves, and the services wired together. */
import { Accounts } from '../../../../core/services/accounts/accounts.js';
import { SignInLinks } from '../../../../core/services/accounts/sign-in.js';
import type { Account } from '../../../../core/services/accounts/types.js';
import type { Clock } from '../../../../core/model/clock.js';
import { DeviceAuthorizations } from '../../../../core/services/auth/device-flow.js';
import { StoreTokenVerifier } from '../../../../core/services/auth/store-verifier.js';
import { TokenIndex } from '../../../../core/services/auth/token-index.js';
import { Tokens } from '../../../../core/services/auth/token-service.js';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { StateStore } from '../../../../core/model/store/types.js';
import { Workspaces } from '../../../../core/services/workspaces/workspaces.js';
import { tempDirs } from '../../infra/state/temp-dirs.js';

export interface ManualClock {
  readonly now: Clock;
  advance(ms: number): void;
}

export function manualClock(start = Date.parse('2030-01-01T00:00:00Z')): ManualClock {
  let current = start;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
  };
}

/** The two store implementations every suite runs against. */
export function storeKinds(): { name: string; open(): Promise<StateStore> }[] {
  const dirs = tempDirs();
  return [
    { name: 'memory store', open: async () => createMemoryStateStore() },
    { name: 'file store', open: () => openFileStateStore({ dataDir: dirs() }) },
  ];
}

export interface AuthServices {
  readonly store: StateStore;
  readonly clock: ManualClock;
  readonly workspaces: Workspaces;
  readonly accounts: Accounts;
  readonly signIn: SignInLinks;
  readonly index: TokenIndex;
  readonly tokens: Tokens;
  readonly verifier: StoreTokenVerifier;
  readonly devices: DeviceAuthorizations;
  readonly owner: Account;
  close(): Promise<void>;
}

/** Everything a first start sets up: `default`, the owner account, the token index. */
export async function authServices(store: StateStore, clock: ManualClock = manualClock()): Promise<AuthServices> {
  const workspaces = new Workspaces(store, clock.now);
  await workspaces.ensureDefault();
  const accounts = new Accounts(store, clock.now);
  const { account: owner } = await accounts.ensureOwner();
  const index = await TokenIndex.open(store);
  const tokens = new Tokens(store, index, workspaces, clock.now);
  return {
    store,
    clock,
    workspaces,
    accounts,
    owner,
    index,
    tokens,
    signIn: new SignInLinks(store, accounts, { clock: clock.now }),
    verifier: new StoreTokenVerifier(index, clock.now),
    devices: new DeviceAuthorizations(store, tokens, { verificationUri: 'http://svc.test/login', clock: clock.now }),
    close: () => index.close(),
  };
}

/**
 * The svc command line: the whole command tree, declared in one place (index.ts runs it).
 * Each command lives in commands/<name>.ts and is loaded only when run.
 */
import sade from 'sade';
import { DEFAULT_PORT } from '../config/schema.js';
import { svcVersion } from '../core/model/paths.js';
import type { CommandContext } from './context.js';
import { declareCommand } from './flags.js';
import { printError } from './output.js';
import { SvcError } from '../core/model/errors.js';

export const prog = sade('svc').version(svcVersion);

type Flags = Record<string, unknown>;

/** Runs a command with the process's context; its number (if any) is the exit code. */
async function run(command: (context: CommandContext) => Promise<unknown>, options: { stoppable?: boolean } = {}): Promise<void> {
  const { processContext } = await import('./context.js');
  const code = await command(processContext(options));
  if (typeof code === 'number') process.exitCode = code;
}

/** A flag's value as a string (mri turns `--name 123` into a number), undefined when absent. */
function text(value: unknown): string | undefined {
  if (value === undefined || value === null || value === true || value === false) return undefined;
  return Array.isArray(value) ? String(value.at(-1)) : String(value);
}

/**
 * The value of a flag that takes one, or undefined when it is left out; `usage_invalid` when it is
 * given without a value (`--data-dir` last on the line): dropping it quietly would change what the
 * command does (a quota bound cleared, the default data dir restored into).
 */
function flagValue(flags: Flags, name: string): string | undefined {
  if (flags[name] === true) {
    throw new SvcError('usage_invalid', `--${name} needs a value, as in --${name}=<value>.`);
  }
  return text(flags[name]);
}

declareCommand(prog, 'serve [app_or_module]', {
  describe: 'Run a live preview of an app on an embedded platform in this process (or on a svc server with --server), and print its URLs.',
  flags: [
    'port',
    'host',
    'data-dir',
    'base-domain',
    'config',
    { flag: '--no-watch', description: 'Deploy once; do not reload the app when its files change' },
    ['server', 'Run the preview on a svc server (the one svc login signed you in to, or this URL) instead of in this process'],
  ],
  examples: [
    'serve examples/quickstart/app.py',
    'serve app --port 8080',
    'serve app.py --server',
    'serve app.py --server https://svc.example.com',
  ],
  action: async (target: string | undefined, flags: Record<string, unknown>) => {
    const { default: serve, serveTarget } = await import('./commands/serve.js');
    let args: ReturnType<typeof serveTarget>;
    try {
      // `svc serve --server app.py`: the parser gave app.py to --server.
      args = serveTarget(target, flags.server);
    } catch (error) {
      process.exitCode = printError(error);
      return;
    }
    await serve(args.target, {
      port: flags.port as string | number | undefined,
      host: flags.host as string | undefined,
      'data-dir': flags['data-dir'] as string | undefined,
      'base-domain': flags['base-domain'] as string | undefined,
      config: flags.config as string | undefined,
      watch: flags.watch as boolean | undefined,
      server: args.server,
    });
  },
});

declareCommand(prog, 'server', {
  describe: 'Run svc as a server: control plane, gateway and autoscaler in this process, with state kept in the data dir.',
  flags: [
    ['port', `Port the gateway and API listen on (env SVC_PORT; default ${DEFAULT_PORT}; 0 picks a free port)`],
    'host',
    'data-dir',
    'base-domain',
    'config',
  ],
  examples: ['server', 'server --port 8080 --data-dir /var/lib/svc'],
  action: async (flags: Record<string, unknown>) => {
    const { default: server } = await import('./commands/server.js');
    await server({
      port: flags.port as string | number | undefined,
      host: flags.host as string | undefined,
      'data-dir': flags['data-dir'] as string | undefined,
      'base-domain': flags['base-domain'] as string | undefined,
      config: flags.config as string | undefined,
    });
  },
});

declareCommand(prog, 'server backup <file>', {
  describe:
    "Copy the embedded server's data dir (its state at one moment and its code bundles; the secrets key only when asked) into one file, while the server runs or not.",
  flags: [
    'data-dir',
    'config',
    {
      flag: '--with-secrets-key',
      description: 'Put the secrets key in the backup too: the file then opens every secret in it',
      default: false,
    },
  ],
  examples: ['server backup /backups/svc-2026-11-30.tar.gz', 'server backup svc.tar.gz --data-dir /var/lib/svc --with-secrets-key'],
  action: (file: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/server-backup.js')).serverBackup(context, String(file), {
        'data-dir': flagValue(flags, 'data-dir'),
        config: flagValue(flags, 'config'),
        'with-secrets-key': flags['with-secrets-key'] === true,
      }),
    ),
});

declareCommand(prog, 'server restore <file>', {
  describe:
    'Put a backup made by svc server backup into an empty data dir, then start svc server on it: every app, token and secret is back.',
  flags: ['data-dir', 'config'],
  examples: ['server restore /backups/svc-2026-11-30.tar.gz --data-dir /var/lib/svc-restored'],
  action: (file: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/server-backup.js')).serverRestore(context, String(file), {
        'data-dir': flagValue(flags, 'data-dir'),
        config: flagValue(flags, 'config'),
      }),
    ),
});

// Commands that talk to a server find it, and the token, as docs/cli.md "Which server, which token" says.

declareCommand(prog, 'login', {
  describe:
    'Sign in to a server: prints a link and a code; open the link, check the code matches, and approve. Saves the token in ~/.svc/credentials.json.',
  flags: ['server', ['no-browser', 'Print the link only; never open a browser (it opens only on a terminal anyway)']],
  examples: ['login --server https://svc.example.com', 'login --no-browser'],
  action: (flags: Flags) =>
    run(
      async (context) =>
        (await import('./commands/login.js')).default(context, { server: text(flags.server), browser: flags.browser !== false }),
      { stoppable: true },
    ),
});

declareCommand(prog, 'logout', {
  describe: 'Sign out: revoke the saved token on its server when possible, and delete the credentials file.',
  examples: ['logout'],
  action: () => run(async (context) => (await import('./commands/logout.js')).default(context)),
});

declareCommand(prog, 'whoami', {
  describe: 'Show the server, workspace, account and token svc uses, and where it found them.',
  flags: ['json'],
  examples: ['whoami', 'whoami --json'],
  action: (flags: Flags) => run(async (context) => (await import('./commands/whoami.js')).default(context, { json: flags.json === true })),
});

declareCommand(prog, 'dashboard', {
  describe: 'Print (and on a desktop open) a fresh one-time sign-in link to the dashboard for the account you are signed in as.',
  flags: ['no-browser', ['json', 'Print JSON: the link, when it expires, whose it is']],
  examples: ['dashboard', 'dashboard --no-browser'],
  action: (flags: Flags) =>
    run(async (context) =>
      (await import('./commands/dashboard.js')).default(context, { browser: flags.browser !== false, json: flags.json === true }),
    ),
});

declareCommand(prog, 'workspace', {
  describe:
    'The workspaces you may use: svc workspace list, svc workspace create <name>, svc workspace use <name>, svc workspace plan, svc workspace callback-secret.',
  examples: ['workspace list', 'workspace use acme-prod'],
  action: () => prog.help('workspace'),
});

declareCommand(prog, 'workspace list', {
  describe: 'List the workspaces your account may use, with your role; * marks the one svc acts in.',
  flags: ['json'],
  examples: ['workspace list'],
  action: (flags: Flags) =>
    run(async (context) => (await import('./commands/workspace.js')).workspaceList(context, { json: flags.json === true })),
});

declareCommand(prog, 'workspace create <name>', {
  describe: 'Create a workspace, which you own (a lowercase name such as acme-prod).',
  flags: [['json', 'Print the workspace as JSON']],
  examples: ['workspace create acme-prod'],
  action: (name: string, flags: Flags) =>
    run(async (context) => (await import('./commands/workspace.js')).workspaceCreate(context, String(name), { json: flags.json === true })),
});

declareCommand(prog, 'workspace use <name>', {
  describe: 'Act in another of your workspaces: svc saves a token of yours there in place of the current one.',
  flags: ['json'],
  examples: ['workspace use acme-prod'],
  action: (name: string, flags: Flags) =>
    run(async (context) => (await import('./commands/workspace.js')).workspaceUse(context, String(name), { json: flags.json === true })),
});

declareCommand(prog, 'workspace plan [workspace] [plan]', {
  describe:
    "Show your workspace's plan and who changed it when; the server's operator sets one with <workspace> <plan> (free, team, business).",
  flags: ['json'],
  examples: ['workspace plan', 'workspace plan acme-prod team'],
  action: (workspace: string | undefined, plan: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/workspace.js')).workspacePlan(
        context,
        workspace === undefined ? undefined : String(workspace),
        plan === undefined ? undefined : String(plan),
        { json: flags.json === true },
      ),
    ),
});

declareCommand(prog, 'workspace quota [workspace]', {
  describe:
    "Show your workspace's quota and what its containers take now; the server's operator sets a workspace's with --containers, --cpu, --memory (MiB) and --gpus, or removes it with --clear.",
  flags: [
    { flag: '--containers', description: 'Containers running at once' },
    { flag: '--cpu', description: "Cores: the sum of the running containers' cpu" },
    { flag: '--memory', description: "MiB: the sum of the running containers' memory" },
    { flag: '--gpus', description: "GPUs: the sum of the running containers' gpu= counts" },
    { flag: '--clear', description: "Remove the quota set by command (the config's holds again)", default: false },
    'json',
  ],
  examples: [
    'workspace quota',
    'workspace quota acme-prod --containers 20 --cpu 8 --memory 16384 --gpus 2',
    'workspace quota acme-prod --clear',
  ],
  action: (workspace: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/workspace.js')).workspaceQuota(context, workspace === undefined ? undefined : String(workspace), {
        ...(flags.containers === undefined ? {} : { containers: flagValue(flags, 'containers') }),
        ...(flags.cpu === undefined ? {} : { cpu: flagValue(flags, 'cpu') }),
        ...(flags.memory === undefined ? {} : { memory: flagValue(flags, 'memory') }),
        ...(flags.gpus === undefined ? {} : { gpus: flagValue(flags, 'gpus') }),
        clear: flags.clear === true,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'workspace callback-secret', {
  describe:
    "Print the key that signs your workspace's completion callbacks (X-Svc-Signature), made on first use; --rotate replaces it. Owners only.",
  flags: [
    { flag: '--rotate', description: 'Make a new secret in place of the old one', default: false },
    ['json', 'Print {"secret", "createdAt"} as JSON'],
  ],
  examples: ['workspace callback-secret', 'workspace callback-secret --rotate'],
  action: (flags: Flags) =>
    run(async (context) =>
      (await import('./commands/workspace.js')).workspaceCallbackSecret(context, {
        json: flags.json === true,
        rotate: flags.rotate === true,
      }),
    ),
});

declareCommand(prog, 'domain', {
  describe: 'Custom domains of your workspace: svc domain list, svc domain verify <domain>.',
  examples: ['domain list'],
  action: () => prog.help('domain'),
});

declareCommand(prog, 'domain list', {
  describe:
    "List the workspace's custom domains: status (pending, verified, suspended), the workload each serves, the TXT record to publish.",
  flags: ['json'],
  examples: ['domain list'],
  action: (flags: Flags) =>
    run(async (context) => (await import('./commands/domain.js')).domainList(context, { json: flags.json === true })),
});

declareCommand(prog, 'domain verify <domain>', {
  describe: "Look the domain's TXT record up now; once found, the domain serves its workload.",
  flags: ['json'],
  examples: ['domain verify api.example.com'],
  action: (domain: string, flags: Flags) =>
    run(async (context) => (await import('./commands/domain.js')).domainVerify(context, String(domain), { json: flags.json === true })),
});

declareCommand(prog, 'member', {
  describe: 'The people of your workspace: svc member list, svc member invite <name>, svc member remove <account id>.',
  examples: ['member list', 'member invite "Ada Lovelace" --role owner'],
  action: () => prog.help('member'),
});

declareCommand(prog, 'member list', {
  describe: 'List the members of the workspace with their roles, invited ones too.',
  flags: ['json'],
  examples: ['member list'],
  action: (flags: Flags) =>
    run(async (context) => (await import('./commands/member.js')).memberList(context, { json: flags.json === true })),
});

declareCommand(prog, 'member invite <name>', {
  describe: 'Invite a person (owners): prints a one-time sign-in link for them, valid 7 days.',
  flags: [{ flag: '--role', description: 'member (uses the workspace, the default) or owner (also invites and removes people)' }, 'json'],
  examples: ['member invite "Ada Lovelace"', 'member invite Grace --role owner'],
  action: (name: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/member.js')).memberInvite(context, String(name), {
        json: flags.json === true,
        ...(typeof flags.role === 'string' ? { role: flags.role } : {}),
      }),
    ),
});

declareCommand(prog, 'member remove <account>', {
  describe: 'Remove a member (owners): signed out of the workspace at once, their tokens there revoked.',
  flags: ['json'],
  examples: ['member remove acc_0123456789abcdef'],
  action: (account: string, flags: Flags) =>
    run(async (context) => (await import('./commands/member.js')).memberRemove(context, String(account), { json: flags.json === true })),
});

declareCommand(prog, 'token', {
  describe: 'Access tokens of your workspace: svc token create, svc token list, svc token revoke <id>.',
  examples: ['token create --name ci --expires-in 30d', 'token list'],
  action: () => prog.help('token'),
});

declareCommand(prog, 'token create', {
  describe: 'Create an access token; its secret is printed once, alone on stdout.',
  flags: [
    { flag: '-n, --name', description: 'A name to tell it by (e.g. ci)' },
    { flag: '--expires-in', description: 'Expire after this long: 30s, 15m, 12h, 30d, 2w (at most a year)' },
    { flag: '--expires-at', description: 'Expire at this ISO 8601 time, e.g. 2030-01-31T12:00:00Z' },
    ['json', 'Print the token with its secret as JSON'],
  ],
  examples: ['token create --name ci --expires-in 30d > ci-token.txt', 'token create --name laptop --expires-at 2030-01-31T12:00:00Z'],
  action: (flags: Flags) =>
    run(async (context) =>
      (await import('./commands/token.js')).tokenCreate(context, {
        name: text(flags.name),
        'expires-in': text(flags['expires-in']),
        'expires-at': text(flags['expires-at']),
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'token list', {
  describe: 'List the live tokens of your workspace (never their secrets).',
  flags: ['json'],
  examples: ['token list', 'token list --json'],
  action: (flags: Flags) => run(async (context) => (await import('./commands/token.js')).tokenList(context, { json: flags.json === true })),
});

declareCommand(prog, 'token revoke <id>', {
  describe: 'Revoke a token by its id (tok_…): every request with it gets 401 from now on.',
  flags: ['json'],
  examples: ['token revoke tok_0f4c2a1b9e77'],
  action: (id: string, flags: Flags) =>
    run(async (context) => (await import('./commands/token.js')).tokenRevoke(context, String(id), { json: flags.json === true })),
});

declareCommand(prog, 'secret', {
  describe: 'Secrets of your workspace, given to workloads as environment variables: svc secret create, set, list, delete.',
  examples: ['secret create db DATABASE_URL=postgres://app@db/app', 'secret list'],
  action: () => prog.help('secret'),
});

declareCommand(prog, 'secret create <name> [pairs]', {
  describe: 'Create a secret from KEY=VALUE pairs (more may follow) and/or a dotenv file; values are never printed.',
  flags: [
    ['from-dotenv', 'Read KEY=VALUE lines from this dotenv file (pairs given as arguments win)'],
    { flag: '--replace', description: 'Overwrite a secret of the same name: its keys become exactly these', default: false },
    ['json', 'Print the secret (its keys, never values) as JSON'],
  ],
  examples: ['secret create db DATABASE_URL=postgres://app@db/app DB_POOL=5', 'secret create stripe --from-dotenv .env.stripe'],
  action: (name: string, first: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/secret.js')).secretCreate(context, String(name), pairsOf(first, flags), {
        'from-dotenv': text(flags['from-dotenv']),
        replace: flags.replace === true,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'secret set <name> [pairs]', {
  describe: 'Set keys of a secret (the others keep their values); workloads see them at their next deploy, or now with --restart.',
  flags: [
    'from-dotenv',
    { flag: '--remove', description: 'Remove this key (repeat for more)' },
    {
      flag: '--restart',
      description: 'Restart the running workloads that use the secret, so that they get the new values now',
      default: false,
    },
    ['json', 'Print the secret (its keys, never values) and the workloads restarted as JSON'],
  ],
  examples: ['secret set db DATABASE_URL=postgres://app@db2/app --restart', 'secret set db --remove DB_POOL'],
  action: (name: string, first: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/secret.js')).secretSet(context, String(name), pairsOf(first, flags), {
        'from-dotenv': text(flags['from-dotenv']),
        remove: listOf(flags.remove),
        restart: flags.restart === true,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'secret list', {
  describe: 'List the secrets of your workspace: names, keys, who changed them and when; never values.',
  flags: ['json'],
  examples: ['secret list'],
  action: (flags: Flags) =>
    run(async (context) => (await import('./commands/secret.js')).secretList(context, { json: flags.json === true })),
});

declareCommand(prog, 'secret delete <name>', {
  describe: 'Delete a secret (asks first; --yes without a terminal). Running workloads keep their values; deploys naming it are refused.',
  flags: ['yes', 'json'],
  examples: ['secret delete db --yes'],
  action: (name: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/secret.js')).secretDelete(context, String(name), { yes: flags.yes === true, json: flags.json === true }),
    ),
});

declareCommand(prog, 'secret reseal', {
  describe:
    "After a key rotation (the operator only): seal every stored secret value again under the server's first key, so that the old keys can go.",
  flags: [['json', 'Print {"secrets", "values"} as JSON']],
  examples: ['secret reseal'],
  action: (flags: Flags) =>
    run(async (context) => (await import('./commands/secret.js')).secretReseal(context, { json: flags.json === true })),
});

declareCommand(prog, 'volume', {
  describe: 'Volumes of your workspace, folders of files kept on the server: svc volume create, list, delete, ls, put, get, rm.',
  examples: ['volume create models', 'volume put models ./weights weights', 'volume ls models weights'],
  action: () => prog.help('volume'),
});

declareCommand(prog, 'volume create <name>', {
  describe: 'Create an empty volume (a lowercase DNS label).',
  flags: [['json', 'Print the volume as JSON']],
  examples: ['volume create models'],
  action: (name: string, flags: Flags) =>
    run(async (context) => (await import('./commands/volume.js')).volumeCreate(context, String(name), { json: flags.json === true })),
});

declareCommand(prog, 'volume list', {
  describe: 'List the volumes of your workspace with the bytes each holds.',
  flags: ['json'],
  examples: ['volume list'],
  action: (flags: Flags) =>
    run(async (context) => (await import('./commands/volume.js')).volumeList(context, { json: flags.json === true })),
});

declareCommand(prog, 'volume delete <name>', {
  describe:
    'Delete a volume and every file in it (asks first; --yes without a terminal). Refused while workloads mount it, unless --force.',
  flags: ['yes', 'json', { flag: '--force', description: 'Delete it even while deployed workloads or runs mount it', default: false }],
  examples: ['volume delete models --yes', 'volume delete models --force'],
  action: (name: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/volume.js')).volumeDelete(context, String(name), {
        yes: flags.yes === true,
        json: flags.json === true,
        force: flags.force === true,
      }),
    ),
});

declareCommand(prog, 'volume ls <name> [path]', {
  describe: "List a volume's folder (its root by default), or one file.",
  flags: [{ flag: '--recursive', description: 'Everything below the folder', default: false }, ['json', 'Print {"entries"} as JSON']],
  examples: ['volume ls models', 'volume ls models weights --recursive'],
  action: (name: string, at: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/volume.js')).volumeLs(context, String(name), text(at), {
        recursive: flags.recursive === true,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'volume put <name> <local> [remote]', {
  describe:
    "Upload a file or a folder's files (streamed) to a path of the volume: the file's or folder's own name at its root by default, or in the folder a remote path ending in / names.",
  flags: [['json', 'Print {"entries"} as JSON']],
  examples: ['volume put models ./small.bin weights/small.bin', 'volume put models ./small.bin weights/', 'volume put models ./weights'],
  action: (name: string, local: string, at: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/volume.js')).volumePut(context, String(name), String(local), text(at), { json: flags.json === true }),
    ),
});

declareCommand(prog, 'volume get <name> <remote> [local]', {
  describe:
    "Download a file or a folder's files (streamed) from the volume: into its own name in this folder by default, or a file to standard output with -.",
  flags: [['json', 'Print {"files"} as JSON']],
  examples: ['volume get models weights/small.bin', 'volume get models weights ./weights-copy', 'volume get models notes.txt -'],
  action: (name: string, at: string, local: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/volume.js')).volumeGet(context, String(name), String(at), text(local), { json: flags.json === true }),
    ),
});

declareCommand(prog, 'volume rm <name> <remote>', {
  describe: 'Remove a file, or a folder with what it holds (--recursive), from the volume.',
  flags: [{ flag: '--recursive', description: 'A folder and everything in it', default: false }, 'json'],
  examples: ['volume rm models weights/old.bin', 'volume rm models weights --recursive'],
  action: (name: string, at: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/volume.js')).volumeRm(context, String(name), String(at), {
        recursive: flags.recursive === true,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'deploy <app_or_module>', {
  describe: 'Deploy an app (a .py file or a module name, optionally :<workload> for one workload) to the server, and print each URL.',
  flags: [
    { flag: '--prune', description: 'Also remove the deployments the app no longer has (whole-app deploys only)', default: false },
    {
      flag: '--dry-run',
      description: "Print what the deploy would do (on Nomad: the jobs and their placements, from Nomad's plan) and deploy nothing",
      default: false,
    },
    ['json', 'Print {"app", "workloads": [{"name", "kind", "url"}]}'],
  ],
  examples: [
    'deploy examples/quickstart/app.py',
    'deploy app:hello',
    'deploy examples/quickstart/app.py --prune --json',
    'deploy examples/quickstart/app.py --dry-run',
  ],
  action: (target: string, flags: Flags) =>
    run(async (context) => {
      await (await import('./commands/deploy.js')).default(context, String(target), {
        prune: flags.prune === true,
        json: flags.json === true,
        dryRun: flags['dry-run'] === true,
      });
    }),
});

declareCommand(prog, 'logs <app>', {
  describe: "Print the log lines of an app's deployments (or of <app>:<workload>), merged by time; --follow keeps printing new ones.",
  flags: [
    { flag: '-f, --follow', description: 'Keep printing new lines until the deployment is deleted or Ctrl-C', default: false },
    { flag: '--since', description: 'Only lines from this long ago (10m, 2h, 1d) or from this ISO 8601 time on' },
    ['json', 'Print one JSON object per line, with its workload'],
  ],
  examples: ['logs quickstart', 'logs quickstart:hello --follow', 'logs quickstart --since 10m --json'],
  action: (target: string, flags: Flags) =>
    run(
      async (context) =>
        (await import('./commands/logs.js')).default(context, String(target), {
          follow: flags.follow === true,
          since: text(flags.since),
          json: flags.json === true,
        }),
      { stoppable: flags.follow === true },
    ),
});

declareCommand(prog, 'app', {
  describe:
    'Deployed apps: svc app list, svc app pause <app>, svc app resume <app>, svc app delete <app>, svc app runs <app>, svc app calls <app>, svc app export <app>.',
  examples: ['app list', 'app pause quickstart'],
  action: () => prog.help('app'),
});

declareCommand(prog, 'app list', {
  describe: 'List the deployed apps of your workspace.',
  flags: ['json'],
  examples: ['app list', 'app list --json'],
  action: (flags: Flags) => run(async (context) => (await import('./commands/app.js')).appList(context, { json: flags.json === true })),
});

declareCommand(prog, 'app pause <app>', {
  describe:
    'Pause an app: every deployment stops (requests in flight finish), definitions and URLs are kept; its URLs answer 503 app_paused.',
  flags: [['json', 'Print the app as JSON']],
  examples: ['app pause quickstart'],
  action: (app: string, flags: Flags) =>
    run(async (context) => (await import('./commands/app.js')).appPause(context, String(app), { json: flags.json === true })),
});

declareCommand(prog, 'app resume <app>', {
  describe: 'Resume a paused app: its deployments start again at their current versions.',
  flags: [['json', 'Print the app as JSON']],
  examples: ['app resume quickstart'],
  action: (app: string, flags: Flags) =>
    run(async (context) => (await import('./commands/app.js')).appResume(context, String(app), { json: flags.json === true })),
});

declareCommand(prog, 'app history <app>', {
  describe:
    'The versions kept of each workload of an app, newest first: when, by whom, what changed (code, image, settings); * marks the one running.',
  flags: [['json', 'Print {"versions"} as JSON']],
  examples: ['app history quickstart'],
  action: (app: string, flags: Flags) =>
    run(async (context) => (await import('./commands/app-history.js')).appHistory(context, String(app), { json: flags.json === true })),
});

declareCommand(prog, 'app rollback <app> [version]', {
  describe:
    "Run an earlier version again (left out: each workload's version before the one it runs), from its own code and image; switched in as a deploy is, with no failed request.",
  flags: [['json', 'Print the app as JSON']],
  examples: ['app rollback quickstart', 'app rollback quickstart 3'],
  action: (app: string, version: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/app-history.js')).appRollback(context, String(app), version === undefined ? undefined : String(version), {
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'app rollover <app>', {
  describe: 'Fresh containers for every running workload of an app, at the version each runs; switched in with no failed request.',
  flags: [['json', 'Print the app as JSON']],
  examples: ['app rollover quickstart'],
  action: (app: string, flags: Flags) =>
    run(async (context) => (await import('./commands/app-history.js')).appRollover(context, String(app), { json: flags.json === true })),
});

declareCommand(prog, 'app delete <app>', {
  describe: 'Delete an app and every deployment of it; its URLs answer 404. Asks first on a terminal; needs --yes elsewhere.',
  flags: ['yes', 'json'],
  examples: ['app delete quickstart', 'app delete quickstart --yes'],
  action: (app: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/app.js')).appDelete(context, String(app), { yes: flags.yes === true, json: flags.json === true }),
    ),
});

declareCommand(prog, 'app runs <app>', {
  describe:
    "The scheduled runs of an app, newest first (the last 100 of each scheduled function), after its schedules and their next tick; --logs RUN prints one run's output.",
  flags: [{ flag: '--logs', description: 'Print the logs of this run (its id, sched-…) instead of the list' }, 'json'],
  examples: ['app runs nightly', 'app runs nightly --logs sched-1795802211000-82751a'],
  action: (app: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/app-runs.js')).appRuns(context, String(app), {
        json: flags.json === true,
        ...(typeof flags.logs === 'string' ? { logs: flags.logs } : {}),
      }),
    ),
});

declareCommand(prog, 'app calls <app>', {
  describe:
    'The spawned calls of an app (f.spawn(), POST …/calls), newest first: id, function, status, age, duration, attempt, error; --follow keeps printing the new and changed ones.',
  flags: [
    { flag: '--status', description: 'Only the calls of this status: queued, running, succeeded, failed, cancelled or expired' },
    { flag: '--limit', description: 'Show at most this many, the newest (1 to 1000; default 100)' },
    {
      flag: '-f, --follow',
      description: 'Ask again every second and print the calls that are new or changed, until Ctrl-C',
      default: false,
    },
    ['json', 'Print {"calls": [...]} as the API answers it (with --follow: one call per line, as it changes)'],
  ],
  examples: ['app calls quickstart', 'app calls quickstart --status failed --limit 20', 'app calls quickstart --follow'],
  action: (app: string, flags: Flags) =>
    run(
      async (context) =>
        (await import('./commands/app-calls.js')).appCalls(context, String(app), {
          status: text(flags.status),
          limit: text(flags.limit),
          follow: flags.follow === true,
          json: flags.json === true,
        }),
      { stoppable: flags.follow === true },
    ),
});

declareCommand(prog, 'app export <app>', {
  describe:
    'Generate a typed client of the deployed app as it is now: a Python package svc_clients.<app> (or, with --language typescript, an ESM package svc-clients/<app>) in the current folder (or --out DIR). Run it again after a deploy.',
  flags: [
    {
      flag: '-o, --out',
      description: 'The folder to write svc_clients/<app>/ (svc-clients/<app>/ for typescript) into (default: the current folder)',
    },
    { flag: '--language', description: 'The exporter to use: python (the default) or typescript; plugins may add others' },
    ['plugin', "A plugin module that registers exporters (repeatable), besides the config's plugins"],
    ['config', 'A config file whose plugins may register exporters (default: SVC_CONFIG)'],
    {
      flag: '--check',
      description: 'Write nothing; exit 1 listing what differs when the client on disk no longer matches the deployed app (for CI)',
      default: false,
    },
    { flag: '--force', description: 'Replace generated files edited since the last export', default: false },
    ['json', 'Print {"app", "language", "package", "root", "files", "generatedFrom"}'],
  ],
  examples: [
    'app export quickstart',
    'app export quickstart --out ../client-project --json',
    'app export quickstart --check',
    'app export quickstart --language typescript',
    'app export quickstart --language http-file --plugin ./docs/recipes/export-http-file.js',
  ],
  action: (app: string, flags: Flags) =>
    run(async (context) => {
      const options = {
        out: text(flags.out),
        language: text(flags.language),
        json: flags.json === true,
        config: text(flags.config),
        plugin: flags.plugin as string | string[] | undefined,
        force: flags.force === true,
      };
      const { default: appExport } = await import('./commands/app-export.js');
      if (flags.check === true) return appExport(context, String(app), { ...options, check: true });
      await appExport(context, String(app), options);
      return undefined;
    }),
});

declareCommand(prog, 'call', {
  describe:
    'Spawned calls, one by one: svc call get <id>, svc call wait <id>, svc call logs <id>, svc call cancel <id> (svc app calls <app> lists them).',
  examples: ['call get call-5f0c2d9e8b7a61403f2e', 'call wait call-5f0c2d9e8b7a61403f2e --timeout 60'],
  action: () => prog.help('call'),
});

declareCommand(prog, 'call get <id>', {
  describe: "Show one spawned call: its status, attempts, times and error, and a JSON call's result once it succeeded.",
  flags: [['json', 'Print {"call": …} as the API answers it']],
  examples: ['call get call-5f0c2d9e8b7a61403f2e', 'call get call-5f0c2d9e8b7a61403f2e --json'],
  action: (id: string, flags: Flags) =>
    run(async (context) => (await import('./commands/call.js')).callGet(context, String(id), { json: flags.json === true })),
});

declareCommand(prog, 'call wait <id>', {
  describe:
    "Wait for a spawned call to end: prints a JSON call's result on stdout; exits 0 when it succeeded, 1 when it failed, was cancelled or expired, 2 when --timeout passed first.",
  flags: [{ flag: '--timeout', description: 'Give up after this long: seconds (90) or a duration (5m); 0 looks once (default: no limit)' }],
  examples: ['call wait call-5f0c2d9e8b7a61403f2e', 'call wait call-5f0c2d9e8b7a61403f2e --timeout 30 > result.json'],
  action: (id: string, flags: Flags) =>
    run(async (context) => (await import('./commands/call.js')).callWait(context, String(id), { timeout: text(flags.timeout) }), {
      stoppable: true,
    }),
});

declareCommand(prog, 'call logs <id>', {
  describe:
    "Print what a spawned call printed, every attempt, its stdout lines on stdout and its stderr lines on stderr (the last 256 KiB; a running call's so far).",
  flags: [['json', 'Print {"lines": […], "dropped": n} as the API answers it']],
  examples: ['call logs call-5f0c2d9e8b7a61403f2e', 'call logs call-5f0c2d9e8b7a61403f2e --json'],
  action: (id: string, flags: Flags) =>
    run(async (context) => (await import('./commands/call.js')).callLogs(context, String(id), { json: flags.json === true })),
});

declareCommand(prog, 'call cancel <id>', {
  describe:
    'Cancel a spawned call that has not ended: a queued one never starts, a running one is given up. A call that ended already is refused (exit 1).',
  examples: ['call cancel call-5f0c2d9e8b7a61403f2e'],
  action: (id: string) => run(async (context) => (await import('./commands/call.js')).callCancel(context, String(id))),
});

declareCommand(prog, 'deployment', {
  describe:
    'Deployments, one workload of an app each: svc deployment list, svc deployment scale <app>/<workload> --min N --max M --buffer B, svc deployment stop <app>/<workload>, svc deployment delete <app>/<workload>.',
  examples: ['deployment list --app quickstart', 'deployment stop quickstart/greet'],
  action: () => prog.help('deployment'),
});

declareCommand(prog, 'deployment list', {
  describe: 'List the deployments of your workspace with their status, containers and URLs.',
  flags: [{ flag: '--app', description: 'Only the deployments of this app' }, 'json'],
  examples: ['deployment list', 'deployment list --app quickstart --json'],
  action: (flags: Flags) =>
    run(async (context) =>
      (await import('./commands/deployment.js')).deploymentList(context, { app: text(flags.app), json: flags.json === true }),
    ),
});

declareCommand(prog, 'deployment stop <name>', {
  describe:
    'Stop one deployment (<app>/<workload> or <app>:<workload>): its URL answers 503 deployment_stopped until the workload is deployed again.',
  flags: [['json', 'Print the app as JSON']],
  examples: ['deployment stop quickstart/greet'],
  action: (name: string, flags: Flags) =>
    run(async (context) => (await import('./commands/deployment.js')).deploymentStop(context, String(name), { json: flags.json === true })),
});

declareCommand(prog, 'deployment scale <name>', {
  describe:
    "Set a running deployment's scaling bounds at once, without a deploy: --min and --max containers, --buffer idle ones (each left out keeps its value); they hold until its next deploy.",
  flags: [
    { flag: '--min', description: 'Containers kept at least (min_containers)' },
    { flag: '--max', description: 'Containers at most (max_containers)' },
    { flag: '--buffer', description: 'Idle containers kept beyond the load (buffer_containers)' },
    ['json', 'Print the app as JSON'],
  ],
  examples: ['deployment scale quickstart/greet --min 2 --max 5', 'deployment scale quickstart/greet --buffer 1'],
  action: (name: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/deployment.js')).deploymentScale(context, String(name), {
        min: flags.min,
        max: flags.max,
        buffer: flags.buffer,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'deployment delete <name>', {
  describe: 'Delete one deployment (<app>/<workload> or <app>:<workload>): its containers and its URL go.',
  flags: ['json'],
  examples: ['deployment delete quickstart/greet'],
  action: (name: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/deployment.js')).deploymentDelete(context, String(name), { json: flags.json === true }),
    ),
});

declareCommand(prog, 'container', {
  describe:
    'Running containers of your workspace: svc container list [app], svc container logs <id>, svc container exec <id> -- <command>, svc container stop <id>.',
  examples: ['container list', 'container logs c-1a2b3c4d5e', 'container stop c-1a2b3c4d5e'],
  action: () => prog.help('container'),
});

declareCommand(prog, 'container list [app]', {
  describe:
    'The running containers (of one app with [app]): id, deployment, version, state, age, requests in flight, CPU seconds and memory now.',
  flags: [['json', 'Print {"containers"} as JSON']],
  examples: ['container list', 'container list quickstart --json'],
  action: (app: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/container.js')).containerList(context, app === undefined ? undefined : String(app), {
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'container logs <id>', {
  describe: "One container's log lines kept; --follow prints each new one as it comes.",
  flags: [
    { flag: '--follow', description: 'Print new lines as they come, until Ctrl-C', default: false },
    ['json', 'One JSON object per line'],
  ],
  examples: ['container logs c-1a2b3c4d5e --follow'],
  action: (id: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/container.js')).containerLogs(context, String(id), {
        follow: flags.follow === true,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'container exec <id>', {
  describe:
    'Run a command inside a running container (its cgroup, volumes, environment and secrets), for owners: svc container exec <id> -- ps aux. Prints its output; svc exits with its exit code.',
  flags: [{ flag: '--timeout', description: 'Seconds it may run, 1 to 600 (default 60)' }, ['json', 'Print the outcome as JSON']],
  examples: ['container exec c-1a2b3c4d5e -- ps aux', 'container exec c-1a2b3c4d5e -- python -c "import fastapi"'],
  action: (id: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/container.js')).containerExec(context, String(id), ((flags._ as unknown[] | undefined) ?? []).map(String), {
        timeout: flags.timeout,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'container stop <id>', {
  describe: 'Stop one container (requests in flight finish first); the autoscaler starts another if its deployment still wants one.',
  flags: [['json', 'Print the container as JSON']],
  examples: ['container stop c-1a2b3c4d5e'],
  action: (id: string, flags: Flags) =>
    run(async (context) => (await import('./commands/container.js')).containerStop(context, String(id), { json: flags.json === true })),
});

declareCommand(prog, 'shell [target]', {
  describe:
    'A terminal inside a container, for owners: a new container of a workload (app.py::workload, or app/workload as deployed) with its image, environment, secrets and volumes, or a running one (--container <id>). svc exits with the exit code of the shell (or of the command after --).',
  flags: [{ flag: '--container', description: 'A running container (svc container list) instead of a new one' }],
  examples: ['shell app.py::predict', 'shell quickstart/greet -- python -c "import fastapi"', 'shell --container c-1a2b3c4d5e'],
  action: (target: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/shell.js')).shell(
        context,
        target === undefined ? undefined : String(target),
        ((flags._ as unknown[] | undefined) ?? []).map(String),
        { ...(text(flags.container) === undefined ? {} : { container: text(flags.container) }) },
      ),
    ),
});

declareCommand(prog, 'usage', {
  describe: "What your workspace's containers used: CPU seconds and memory GiB-hours from their cgroups, by workload, app or day.",
  flags: [
    { flag: '--since', description: 'How far back: 24h, 7d (the default), at most 90d' },
    { flag: '--by', description: 'workload (the default), app or day' },
    ['json', 'Print the figures as JSON'],
  ],
  examples: ['usage', 'usage --since 24h --by app', 'usage --by day --json'],
  action: (flags: Flags) =>
    run(async (context) =>
      (await import('./commands/usage.js')).usage(context, { since: text(flags.since), by: text(flags.by), json: flags.json === true }),
    ),
});

declareCommand(prog, 'example', {
  describe: 'Example projects the server ships: svc example list, svc example download <name>.',
  examples: ['example list', 'example download asgi-fastapi'],
  action: () => prog.help('example'),
});

declareCommand(prog, 'example list', {
  describe: 'List the example projects, each with what it shows.',
  flags: ['json'],
  examples: ['example list'],
  action: (flags: Flags) =>
    run(async (context) => (await import('./commands/example.js')).exampleList(context, { json: flags.json === true })),
});

declareCommand(prog, 'example download <name>', {
  describe: 'Download an example project into a new folder ./<name> (or --dir), ready for `svc serve app.py`.',
  flags: [
    { flag: '-d, --dir', description: 'The folder to write it into (default ./<name>); it must be new or empty' },
    {
      flag: '-f, --force',
      description: 'Write into an existing folder that is not empty (files of the same name are replaced)',
      default: false,
    },
    ['json', 'Print {"name", "dir", "files"}'],
  ],
  examples: ['example download asgi-fastapi', 'example download realtime-chat --dir chat'],
  action: (name: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/example.js')).exampleDownload(context, String(name), {
        dir: text(flags.dir),
        force: flags.force === true,
        json: flags.json === true,
      }),
    ),
});

declareCommand(prog, 'jobs', {
  describe: 'Nomad jobs: svc jobs render <app_or_module> prints the jobs svc would submit to a cluster.',
  examples: ['jobs render examples/quickstart/app.py'],
  action: () => prog.help('jobs'),
});

declareCommand(prog, 'jobs render <app_or_module>', {
  describe:
    "Print the Nomad jobs svc would submit for an app (a .py file or a module name, optionally :<workload>) as a JSON array of PUT /v1/jobs bodies, after the plugins' transformJob hook and the strict job validator.",
  flags: [
    { flag: '--driver', description: "Nomad task driver: docker, raw_exec or exec (default: the config's nomadDriver, exec)" },
    { flag: '--datacenter', description: 'Datacenter the jobs may run in; repeat it or separate with commas (default dc1)' },
    { flag: '--region', description: 'Nomad region (default global)' },
    { flag: '--namespace', description: 'Nomad namespace (default default)' },
    { flag: '--stage', description: 'deployed or preview (default deployed)' },
    { flag: '--workspace', description: 'Workspace the app belongs to (default default)' },
    {
      flag: '--registry',
      description:
        "Registry and prefix of the docker images: <registry>/<image id>:latest (default: the config's imageRegistry, else localhost:5000/svc)",
    },
    { flag: '--bundle-url', description: 'URL of the code bundle artifact (default a placeholder; the server signs real ones)' },
    ['base-domain', "Base domain for the Host() and Fabio host tags (default the config file's baseDomain)"],
    { flag: '--mhz-per-core', description: 'MHz one core of the cpu option reserves (default 2000)' },
    { flag: '--cores', description: 'Reserve whole cores (Resources.Cores) instead of MHz', default: false },
    { flag: '--python', description: 'Interpreter raw_exec/exec run (default python3)' },
    'plugin',
    ['config', 'A JSON config file (env SVC_CONFIG): its plugins, baseDomain and publicUrl apply'],
  ],
  examples: [
    'jobs render examples/quickstart/app.py',
    'jobs render app:hello --driver raw_exec --datacenter dc1,dc2 --region eu',
    'jobs render examples/quickstart/app.py --plugin ./job-placement.js > jobs.json',
  ],
  action: (target: string, flags: Flags) =>
    run(async (context) => {
      const list = (value: unknown) => (value === undefined ? undefined : Array.isArray(value) ? value.map(String) : String(value));
      const result = await (await import('./commands/jobs-render.js')).default(context, String(target), {
        driver: text(flags.driver),
        datacenter: list(flags.datacenter),
        region: text(flags.region),
        namespace: text(flags.namespace),
        stage: text(flags.stage),
        workspace: text(flags.workspace),
        registry: text(flags.registry),
        'bundle-url': text(flags['bundle-url']),
        'base-domain': text(flags['base-domain']),
        'mhz-per-core': text(flags['mhz-per-core']),
        cores: flags.cores === true,
        python: text(flags.python),
        plugin: list(flags.plugin),
        config: text(flags.config),
      });
      return typeof result === 'number' ? result : undefined;
    }),
});

declareCommand(prog, 'run <target>', {
  describe:
    'Run a function remotely: <module or file>:<function>, then its arguments, passed through as they are (--name value pairs included).',
  examples: ['run examples/quickstart/app.py:square 12', 'run tools:resize photo.png --width 320 > resized.json'],
  action: async (target: string, flags: Flags) => {
    // Reached only without pass-through (`svc run -- <target> …`); `svc run <target> …` is split before sade (run-args.ts).
    const args = ((flags._ as unknown[] | undefined) ?? []).map(String);
    await (await import('./commands/run.js')).default(String(target), args);
  },
});

/** KEY=VALUE pairs: sade gives the first positional, the rest come in `_`. */
function pairsOf(first: string | undefined, flags: Flags): string[] {
  const rest = Array.isArray(flags._) ? flags._.map(String) : [];
  return [...(first === undefined ? [] : [String(first)]), ...rest];
}

/** A flag that may be repeated: sade gives a string once, an array more often. */
function listOf(value: unknown): string[] {
  if (value === undefined || value === true || value === false) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

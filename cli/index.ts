#!/usr/bin/env node
/**
 * The svc command line: the whole command tree, declared in one place.
 * Each command lives in commands/<name>.ts and is loaded only when run.
 */
import sade from 'sade';
import { DEFAULT_PORT } from '../config/schema.js';
import { svcVersion } from '../core/paths.js';
import type { CommandContext } from './context.js';
import { printError } from './output.js';
import { splitRunArgs } from './run-args.js';

const prog = sade('svc').version(svcVersion);

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

prog
  .command('serve [app_or_module]')
  .describe('Run a live preview of an app on an embedded platform in this process (or on a svc server with --server), and print its URLs.')
  .option('-p, --port', `Port the gateway listens on (env SVC_PORT; default ${DEFAULT_PORT}; 0 picks a free port)`)
  .option('-H, --host', 'Interface to listen on (env SVC_HOST; default 127.0.0.1)')
  .option('--data-dir', 'Where state and the owner token live (env SVC_DATA_DIR; default ~/.svc/data)')
  .option('--base-domain', 'Also serve host-based URLs <app>-<workload>.<domain> (env SVC_BASE_DOMAIN; e.g. localhost)')
  .option('-c, --config', 'A JSON config file (env SVC_CONFIG); see docs/configuration.md')
  .option('--no-watch', 'Deploy once; do not reload the app when its files change')
  .option('--server', 'Run the preview on a svc server (the one svc login signed you in to, or this URL) instead of in this process')
  .example('serve examples/quickstart/app.py')
  .example('serve app --port 8080')
  .example('serve app.py --server')
  .example('serve app.py --server https://svc.example.com')
  .action(async (target: string | undefined, flags: Record<string, unknown>) => {
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
  });

prog
  .command('server')
  .describe('Run svc as a server: control plane, gateway and autoscaler in this process, with state kept in the data dir.')
  .option('-p, --port', `Port the gateway and API listen on (env SVC_PORT; default ${DEFAULT_PORT}; 0 picks a free port)`)
  .option('-H, --host', 'Interface to listen on (env SVC_HOST; default 127.0.0.1)')
  .option('--data-dir', 'Where state and the owner token live (env SVC_DATA_DIR; default ~/.svc/data)')
  .option('--base-domain', 'Also serve host-based URLs <app>-<workload>.<domain> (env SVC_BASE_DOMAIN; e.g. localhost)')
  .option('-c, --config', 'A JSON config file (env SVC_CONFIG); see docs/configuration.md')
  .example('server')
  .example('server --port 8080 --data-dir /var/lib/svc')
  .action(async (flags: Record<string, unknown>) => {
    const { default: server } = await import('./commands/server.js');
    await server({
      port: flags.port as string | number | undefined,
      host: flags.host as string | undefined,
      'data-dir': flags['data-dir'] as string | undefined,
      'base-domain': flags['base-domain'] as string | undefined,
      config: flags.config as string | undefined,
    });
  });

// Commands that talk to a server find it, and the token, as docs/cli.md "Which server, which token" says.

prog
  .command('login')
  .describe('Sign in to a server: prints a link and a code; open the link, check the code matches, and approve. Saves the token in ~/.svc/credentials.json.')
  .option('--server', 'The server to sign in to (default: SVC_SERVER, the saved server, else http://127.0.0.1:7420)')
  .option('--no-browser', 'Print the link only; never open a browser (it opens only on a terminal anyway)')
  .example('login --server https://svc.example.com')
  .example('login --no-browser')
  .action((flags: Flags) => run(async (context) => (await import('./commands/login.js')).default(context, { server: text(flags.server), browser: flags.browser !== false }), { stoppable: true }));

prog
  .command('logout')
  .describe('Sign out: revoke the saved token on its server when possible, and delete the credentials file.')
  .example('logout')
  .action(() => run(async (context) => (await import('./commands/logout.js')).default(context)));

prog
  .command('whoami')
  .describe('Show the server, workspace, account and token svc uses, and where it found them.')
  .option('--json', 'Print JSON', false)
  .example('whoami')
  .example('whoami --json')
  .action((flags: Flags) => run(async (context) => (await import('./commands/whoami.js')).default(context, { json: flags.json === true })));

prog
  .command('dashboard')
  .describe('Print (and on a desktop open) a fresh one-time sign-in link to the dashboard for the account you are signed in as.')
  .option('--no-browser', 'Print the link only; do not open a browser')
  .option('--json', 'Print JSON: the link, when it expires, whose it is', false)
  .example('dashboard')
  .example('dashboard --no-browser')
  .action((flags: Flags) => run(async (context) => (await import('./commands/dashboard.js')).default(context, { browser: flags.browser !== false, json: flags.json === true })));

prog
  .command('workspace')
  .describe('The workspaces you may use: svc workspace list, svc workspace create <name>, svc workspace use <name>, svc workspace plan.')
  .example('workspace list')
  .example('workspace use acme-prod')
  .action(() => prog.help('workspace'));

prog
  .command('workspace list')
  .describe('List the workspaces your account may use, with your role; * marks the one svc acts in.')
  .option('--json', 'Print JSON', false)
  .example('workspace list')
  .action((flags: Flags) => run(async (context) => (await import('./commands/workspace.js')).workspaceList(context, { json: flags.json === true })));

prog
  .command('workspace create <name>')
  .describe('Create a workspace, which you own (a lowercase name such as acme-prod).')
  .option('--json', 'Print the workspace as JSON', false)
  .example('workspace create acme-prod')
  .action((name: string, flags: Flags) => run(async (context) => (await import('./commands/workspace.js')).workspaceCreate(context, String(name), { json: flags.json === true })));

prog
  .command('workspace use <name>')
  .describe('Act in another of your workspaces: svc saves a token of yours there in place of the current one.')
  .option('--json', 'Print JSON', false)
  .example('workspace use acme-prod')
  .action((name: string, flags: Flags) => run(async (context) => (await import('./commands/workspace.js')).workspaceUse(context, String(name), { json: flags.json === true })));

prog
  .command('workspace plan [workspace] [plan]')
  .describe("Show your workspace's plan and who changed it when; the server's operator sets one with <workspace> <plan> (free, team, business).")
  .option('--json', 'Print JSON', false)
  .example('workspace plan')
  .example('workspace plan acme-prod team')
  .action((workspace: string | undefined, plan: string | undefined, flags: Flags) =>
    run(async (context) => (await import('./commands/workspace.js')).workspacePlan(context, workspace === undefined ? undefined : String(workspace), plan === undefined ? undefined : String(plan), { json: flags.json === true })));

prog
  .command('domain')
  .describe('Custom domains of your workspace: svc domain list, svc domain verify <domain>.')
  .example('domain list')
  .action(() => prog.help('domain'));

prog
  .command('domain list')
  .describe('List the workspace\'s custom domains: status (pending, verified, suspended), the workload each serves, the TXT record to publish.')
  .option('--json', 'Print JSON', false)
  .example('domain list')
  .action((flags: Flags) => run(async (context) => (await import('./commands/domain.js')).domainList(context, { json: flags.json === true })));

prog
  .command('domain verify <domain>')
  .describe('Look the domain\'s TXT record up now; once found, the domain serves its workload.')
  .option('--json', 'Print JSON', false)
  .example('domain verify api.example.com')
  .action((domain: string, flags: Flags) => run(async (context) => (await import('./commands/domain.js')).domainVerify(context, String(domain), { json: flags.json === true })));

prog
  .command('member')
  .describe('The people of your workspace: svc member list, svc member invite <name>, svc member remove <account id>.')
  .example('member list')
  .example('member invite "Ada Lovelace" --role owner')
  .action(() => prog.help('member'));

prog
  .command('member list')
  .describe('List the members of the workspace with their roles, invited ones too.')
  .option('--json', 'Print JSON', false)
  .example('member list')
  .action((flags: Flags) => run(async (context) => (await import('./commands/member.js')).memberList(context, { json: flags.json === true })));

prog
  .command('member invite <name>')
  .describe('Invite a person (owners): prints a one-time sign-in link for them, valid 7 days.')
  .option('--role', 'member (uses the workspace, the default) or owner (also invites and removes people)')
  .option('--json', 'Print JSON', false)
  .example('member invite "Ada Lovelace"')
  .example('member invite Grace --role owner')
  .action((name: string, flags: Flags) => run(async (context) => (await import('./commands/member.js')).memberInvite(context, String(name), { json: flags.json === true, ...(typeof flags.role === 'string' ? { role: flags.role } : {}) })));

prog
  .command('member remove <account>')
  .describe('Remove a member (owners): signed out of the workspace at once, their tokens there revoked.')
  .option('--json', 'Print JSON', false)
  .example('member remove acc_0123456789abcdef')
  .action((account: string, flags: Flags) => run(async (context) => (await import('./commands/member.js')).memberRemove(context, String(account), { json: flags.json === true })));

prog
  .command('token')
  .describe('Access tokens of your workspace: svc token create, svc token list, svc token revoke <id>.')
  .example('token create --name ci --expires-in 30d')
  .example('token list')
  .action(() => prog.help('token'));

prog
  .command('token create')
  .describe('Create an access token; its secret is printed once, alone on stdout.')
  .option('-n, --name', 'A name to tell it by (e.g. ci)')
  .option('--expires-in', 'Expire after this long: 30s, 15m, 12h, 30d, 2w (at most a year)')
  .option('--expires-at', 'Expire at this ISO 8601 time, e.g. 2030-01-31T12:00:00Z')
  .option('--json', 'Print the token with its secret as JSON', false)
  .example('token create --name ci --expires-in 30d > ci-token.txt')
  .example('token create --name laptop --expires-at 2030-01-31T12:00:00Z')
  .action((flags: Flags) =>
    run(async (context) =>
      (await import('./commands/token.js')).tokenCreate(context, {
        name: text(flags.name),
        'expires-in': text(flags['expires-in']),
        'expires-at': text(flags['expires-at']),
        json: flags.json === true,
      }),
    ),
  );

prog
  .command('token list')
  .describe('List the live tokens of your workspace (never their secrets).')
  .option('--json', 'Print JSON', false)
  .example('token list')
  .example('token list --json')
  .action((flags: Flags) => run(async (context) => (await import('./commands/token.js')).tokenList(context, { json: flags.json === true })));

prog
  .command('token revoke <id>')
  .describe('Revoke a token by its id (tok_…): every request with it gets 401 from now on.')
  .option('--json', 'Print JSON', false)
  .example('token revoke tok_0f4c2a1b9e77')
  .action((id: string, flags: Flags) => run(async (context) => (await import('./commands/token.js')).tokenRevoke(context, String(id), { json: flags.json === true })));

prog
  .command('secret')
  .describe('Secrets of your workspace, given to workloads as environment variables: svc secret create, set, list, delete.')
  .example('secret create db DATABASE_URL=postgres://app@db/app')
  .example('secret list')
  .action(() => prog.help('secret'));

prog
  .command('secret create <name> [pairs]')
  .describe('Create a secret from KEY=VALUE pairs (more may follow) and/or a dotenv file; values are never printed.')
  .option('--from-dotenv', 'Read KEY=VALUE lines from this dotenv file (pairs given as arguments win)')
  .option('--replace', 'Overwrite a secret of the same name: its keys become exactly these', false)
  .option('--json', 'Print the secret (its keys, never values) as JSON', false)
  .example('secret create db DATABASE_URL=postgres://app@db/app DB_POOL=5')
  .example('secret create stripe --from-dotenv .env.stripe')
  .action((name: string, first: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/secret.js')).secretCreate(context, String(name), pairsOf(first, flags), {
        'from-dotenv': text(flags['from-dotenv']), replace: flags.replace === true, json: flags.json === true,
      }),
    ),
  );

prog
  .command('secret set <name> [pairs]')
  .describe('Set keys of a secret (the others keep their values); workloads see them at their next deploy, or now with --restart.')
  .option('--from-dotenv', 'Read KEY=VALUE lines from this dotenv file')
  .option('--remove', 'Remove this key (repeat for more)')
  .option('--restart', 'Restart the running workloads that use the secret, so that they get the new values now', false)
  .option('--json', 'Print the secret (its keys, never values) and the workloads restarted as JSON', false)
  .example('secret set db DATABASE_URL=postgres://app@db2/app --restart')
  .example('secret set db --remove DB_POOL')
  .action((name: string, first: string | undefined, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/secret.js')).secretSet(context, String(name), pairsOf(first, flags), {
        'from-dotenv': text(flags['from-dotenv']), remove: listOf(flags.remove), restart: flags.restart === true, json: flags.json === true,
      }),
    ),
  );

prog
  .command('secret list')
  .describe('List the secrets of your workspace: names, keys, who changed them and when; never values.')
  .option('--json', 'Print JSON', false)
  .example('secret list')
  .action((flags: Flags) => run(async (context) => (await import('./commands/secret.js')).secretList(context, { json: flags.json === true })));

prog
  .command('secret delete <name>')
  .describe('Delete a secret (asks first; --yes without a terminal). Running workloads keep their values; deploys naming it are refused.')
  .option('-y, --yes', 'Do not ask', false)
  .option('--json', 'Print JSON', false)
  .example('secret delete db --yes')
  .action((name: string, flags: Flags) => run(async (context) => (await import('./commands/secret.js')).secretDelete(context, String(name), { yes: flags.yes === true, json: flags.json === true })));

prog
  .command('secret reseal')
  .describe("After a key rotation (the operator only): seal every stored secret value again under the server's first key, so that the old keys can go.")
  .option('--json', 'Print {"secrets", "values"} as JSON', false)
  .example('secret reseal')
  .action((flags: Flags) => run(async (context) => (await import('./commands/secret.js')).secretReseal(context, { json: flags.json === true })));

prog
  .command('deploy <app_or_module>')
  .describe('Deploy an app (a .py file or a module name, optionally :<workload> for one workload) to the server, and print each URL.')
  .option('--prune', 'Also remove the deployments the app no longer has (whole-app deploys only)', false)
  .option('--dry-run', 'Print what the deploy would do (on Nomad: the jobs and their placements, from Nomad\'s plan) and deploy nothing', false)
  .option('--json', 'Print {"app", "workloads": [{"name", "kind", "url"}]}', false)
  .example('deploy examples/quickstart/app.py')
  .example('deploy app:hello')
  .example('deploy examples/quickstart/app.py --prune --json')
  .example('deploy examples/quickstart/app.py --dry-run')
  .action((target: string, flags: Flags) =>
    run(async (context) => {
      await (await import('./commands/deploy.js')).default(context, String(target), { prune: flags.prune === true, json: flags.json === true, dryRun: flags['dry-run'] === true });
    }),
  );

prog
  .command('logs <app>')
  .describe('Print the log lines of an app\'s deployments (or of <app>:<workload>), merged by time; --follow keeps printing new ones.')
  .option('-f, --follow', 'Keep printing new lines until the deployment is deleted or Ctrl-C', false)
  .option('--since', 'Only lines from this long ago (10m, 2h, 1d) or from this ISO 8601 time on')
  .option('--json', 'Print one JSON object per line, with its workload', false)
  .example('logs quickstart')
  .example('logs quickstart:hello --follow')
  .example('logs quickstart --since 10m --json')
  .action((target: string, flags: Flags) =>
    run(
      async (context) =>
        (await import('./commands/logs.js')).default(context, String(target), { follow: flags.follow === true, since: text(flags.since), json: flags.json === true }),
      { stoppable: flags.follow === true },
    ),
  );

prog
  .command('app')
  .describe('Deployed apps: svc app list, svc app pause <app>, svc app resume <app>, svc app delete <app>, svc app runs <app>, svc app export <app>.')
  .example('app list')
  .example('app pause quickstart')
  .action(() => prog.help('app'));

prog
  .command('app list')
  .describe('List the deployed apps of your workspace.')
  .option('--json', 'Print JSON', false)
  .example('app list')
  .example('app list --json')
  .action((flags: Flags) => run(async (context) => (await import('./commands/app.js')).appList(context, { json: flags.json === true })));

prog
  .command('app pause <app>')
  .describe('Pause an app: every deployment stops (requests in flight finish), definitions and URLs are kept; its URLs answer 503 app_paused.')
  .option('--json', 'Print the app as JSON', false)
  .example('app pause quickstart')
  .action((app: string, flags: Flags) => run(async (context) => (await import('./commands/app.js')).appPause(context, String(app), { json: flags.json === true })));

prog
  .command('app resume <app>')
  .describe('Resume a paused app: its deployments start again at their current versions.')
  .option('--json', 'Print the app as JSON', false)
  .example('app resume quickstart')
  .action((app: string, flags: Flags) => run(async (context) => (await import('./commands/app.js')).appResume(context, String(app), { json: flags.json === true })));

prog
  .command('app delete <app>')
  .describe('Delete an app and every deployment of it; its URLs answer 404. Asks first on a terminal; needs --yes elsewhere.')
  .option('-y, --yes', 'Do not ask', false)
  .option('--json', 'Print JSON', false)
  .example('app delete quickstart')
  .example('app delete quickstart --yes')
  .action((app: string, flags: Flags) =>
    run(async (context) => (await import('./commands/app.js')).appDelete(context, String(app), { yes: flags.yes === true, json: flags.json === true })),
  );

prog
  .command('app runs <app>')
  .describe("The scheduled runs of an app, newest first (the last 100 of each scheduled function), after its schedules and their next tick; --logs RUN prints one run's output.")
  .option('--logs', 'Print the logs of this run (its id, sched-…) instead of the list')
  .option('--json', 'Print JSON', false)
  .example('app runs nightly')
  .example('app runs nightly --logs sched-1795802211000-82751a')
  .action((app: string, flags: Flags) =>
    run(async (context) =>
      (await import('./commands/app-runs.js')).appRuns(context, String(app), { json: flags.json === true, ...(typeof flags.logs === 'string' ? { logs: flags.logs } : {}) }),
    ),
  );

prog
  .command('app export <app>')
  .describe('Generate a typed client of the deployed app as it is now: a Python package svc_clients.<app> (or, with --language typescript, an ESM package svc-clients/<app>) in the current folder (or --out DIR). Run it again after a deploy.')
  .option('-o, --out', 'The folder to write svc_clients/<app>/ (svc-clients/<app>/ for typescript) into (default: the current folder)')
  .option('--language', 'The exporter to use: python (the default) or typescript; plugins may add others')
  .option('--plugin', 'A plugin module that registers exporters (repeatable), besides the config\'s plugins')
  .option('-c, --config', 'A config file whose plugins may register exporters (default: SVC_CONFIG)')
  .option('--check', 'Write nothing; exit 1 listing what differs when the client on disk no longer matches the deployed app (for CI)', false)
  .option('--force', 'Replace generated files edited since the last export', false)
  .option('--json', 'Print {"app", "language", "package", "root", "files", "generatedFrom"}', false)
  .example('app export quickstart')
  .example('app export quickstart --out ../client-project --json')
  .example('app export quickstart --check')
  .example('app export quickstart --language typescript')
  .example('app export quickstart --language http-file --plugin ./docs/recipes/export-http-file.js')
  .action((app: string, flags: Flags) =>
    run(async (context) => {
      const options = {
        out: text(flags.out), language: text(flags.language), json: flags.json === true, config: text(flags.config),
        plugin: flags.plugin as string | string[] | undefined, force: flags.force === true,
      };
      const { default: appExport } = await import('./commands/app-export.js');
      if (flags.check === true) return appExport(context, String(app), { ...options, check: true });
      await appExport(context, String(app), options);
      return undefined;
    }),
  );

prog
  .command('deployment')
  .describe('Deployments, one workload of an app each: svc deployment list, svc deployment stop <app>/<workload>, svc deployment delete <app>/<workload>.')
  .example('deployment list --app quickstart')
  .example('deployment stop quickstart/greet')
  .action(() => prog.help('deployment'));

prog
  .command('deployment list')
  .describe('List the deployments of your workspace with their status, containers and URLs.')
  .option('--app', 'Only the deployments of this app')
  .option('--json', 'Print JSON', false)
  .example('deployment list')
  .example('deployment list --app quickstart --json')
  .action((flags: Flags) => run(async (context) => (await import('./commands/deployment.js')).deploymentList(context, { app: text(flags.app), json: flags.json === true })));

prog
  .command('deployment stop <name>')
  .describe('Stop one deployment (<app>/<workload> or <app>:<workload>): its URL answers 503 deployment_stopped until the workload is deployed again.')
  .option('--json', 'Print the app as JSON', false)
  .example('deployment stop quickstart/greet')
  .action((name: string, flags: Flags) => run(async (context) => (await import('./commands/deployment.js')).deploymentStop(context, String(name), { json: flags.json === true })));

prog
  .command('deployment delete <name>')
  .describe('Delete one deployment (<app>/<workload> or <app>:<workload>): its containers and its URL go.')
  .option('--json', 'Print JSON', false)
  .example('deployment delete quickstart/greet')
  .action((name: string, flags: Flags) => run(async (context) => (await import('./commands/deployment.js')).deploymentDelete(context, String(name), { json: flags.json === true })));

prog
  .command('example')
  .describe('Example projects the server ships: svc example list, svc example download <name>.')
  .example('example list')
  .example('example download asgi-fastapi')
  .action(() => prog.help('example'));

prog
  .command('example list')
  .describe('List the example projects, each with what it shows.')
  .option('--json', 'Print JSON', false)
  .example('example list')
  .action((flags: Flags) => run(async (context) => (await import('./commands/example.js')).exampleList(context, { json: flags.json === true })));

prog
  .command('example download <name>')
  .describe('Download an example project into a new folder ./<name> (or --dir), ready for `svc serve app.py`.')
  .option('-d, --dir', 'The folder to write it into (default ./<name>); it must be new or empty')
  .option('-f, --force', 'Write into an existing folder that is not empty (files of the same name are replaced)', false)
  .option('--json', 'Print {"name", "dir", "files"}', false)
  .example('example download asgi-fastapi')
  .example('example download realtime-chat --dir chat')
  .action((name: string, flags: Flags) =>
    run(async (context) => (await import('./commands/example.js')).exampleDownload(context, String(name), { dir: text(flags.dir), force: flags.force === true, json: flags.json === true })),
  );

prog
  .command('jobs')
  .describe('Nomad jobs: svc jobs render <app_or_module> prints the jobs svc would submit to a cluster.')
  .example('jobs render examples/quickstart/app.py')
  .action(() => prog.help('jobs'));

prog
  .command('jobs render <app_or_module>')
  .describe('Print the Nomad jobs svc would submit for an app (a .py file or a module name, optionally :<workload>) as a JSON array of PUT /v1/jobs bodies, after the plugins\' transformJob hook and the strict job validator.')
  .option('--driver', 'Nomad task driver: docker, raw_exec or exec (default: the config\'s nomadDriver, exec)')
  .option('--datacenter', 'Datacenter the jobs may run in; repeat it or separate with commas (default dc1)')
  .option('--region', 'Nomad region (default global)')
  .option('--namespace', 'Nomad namespace (default default)')
  .option('--stage', 'deployed or preview (default deployed)')
  .option('--workspace', 'Workspace the app belongs to (default default)')
  .option('--registry', 'Registry and prefix of the docker images: <registry>/<image id>:latest (default: the config\'s imageRegistry, else localhost:5000/svc)')
  .option('--bundle-url', 'URL of the code bundle artifact (default a placeholder; the server signs real ones)')
  .option('--base-domain', 'Base domain for the Host() and Fabio host tags (default the config file\'s baseDomain)')
  .option('--mhz-per-core', 'MHz one core of the cpu option reserves (default 2000)')
  .option('--cores', 'Reserve whole cores (Resources.Cores) instead of MHz', false)
  .option('--python', 'Interpreter raw_exec/exec run (default python3)')
  .option('--plugin', 'A plugin module (path or package) whose transformJob hook also runs; repeatable')
  .option('-c, --config', 'A JSON config file (env SVC_CONFIG): its plugins, baseDomain and publicUrl apply')
  .example('jobs render examples/quickstart/app.py')
  .example('jobs render app:hello --driver raw_exec --datacenter dc1,dc2 --region eu')
  .example('jobs render examples/quickstart/app.py --plugin ./job-placement.js > jobs.json')
  .action((target: string, flags: Flags) =>
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
  );

prog
  .command('run <target>')
  .describe('Run a function remotely: <module or file>:<function>, then its arguments, passed through as they are (--name value pairs included).')
  .example('run examples/quickstart/app.py:square 12')
  .example('run tools:resize photo.png --width 320 > resized.json')
  .action(async (target: string, flags: Flags) => {
    // Reached only without pass-through (`svc run -- <target> …`); `svc run <target> …` is split before sade (run-args.ts).
    const args = ((flags._ as unknown[] | undefined) ?? []).map(String);
    await (await import('./commands/run.js')).default(String(target), args);
  });

try {
  const runCall = splitRunArgs(process.argv.slice(2));
  if (runCall !== null) await (await import('./commands/run.js')).default(runCall.target, runCall.args);
  else {
    // `--no-browser` (svc login) is mri's negation of `browser`, which must be a known option for it to be taken.
    await prog.parse(process.argv, { unknown: (flag: string) => `unknown option ${flag}`, alias: { browser: [], watch: [] } });
  }
} catch (error) {
  process.exitCode = printError(error);
}

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

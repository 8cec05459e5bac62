#!/usr/bin/env node
/**
 * The svc command line: the whole command tree, declared in one place.
 * Each command lives in commands/<name>.ts and is loaded only when run.
 */
import sade from 'sade';
import { DEFAULT_PORT } from '../config/schema.js';
import { printError } from './output.js';

const version = '0.1.0';
const prog = sade('svc').version(version);

prog
  .command('serve <app_or_module>')
  .describe('Run a live preview of an app on an embedded platform in this process, and print its URLs.')
  .option('-p, --port', `Port the gateway listens on (env SVC_PORT; default ${DEFAULT_PORT}; 0 picks a free port)`)
  .option('-H, --host', 'Interface to listen on (env SVC_HOST; default 127.0.0.1)')
  .option('--data-dir', 'Where state and the owner token live (env SVC_DATA_DIR; default ~/.svc/data)')
  .option('--base-domain', 'Also serve host-based URLs <app>-<workload>.<domain> (env SVC_BASE_DOMAIN; e.g. localhost)')
  .option('-c, --config', 'A JSON config file (env SVC_CONFIG); see docs/configuration.md')
  .example('serve examples/quickstart/app.py')
  .example('serve app --port 8080')
  .action(async (target: string, flags: Record<string, unknown>) => {
    const { default: serve } = await import('./commands/serve.js');
    await serve(target, {
      port: flags.port as string | number | undefined,
      host: flags.host as string | undefined,
      'data-dir': flags['data-dir'] as string | undefined,
      'base-domain': flags['base-domain'] as string | undefined,
      config: flags.config as string | undefined,
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

try {
  await prog.parse(process.argv, { unknown: (flag: string) => `unknown option ${flag}` });
} catch (error) {
  process.exitCode = printError(error);
}

/**
 * How a command of the svc CLI is declared to sade: its usage, description,
 * flags, examples and action in one place. A flag several commands take is
 * declared once, in SHARED_FLAGS; a command names it (with a description of
 * its own where it says more), beside the flags only it takes.
 */
import type { Handler, Sade } from 'sade';
import { DEFAULT_PORT } from '../config/schema.js';

/** A flag as `--help` shows it: `-y, --yes`, what it does, and the default shown after it (only for on/off flags). */
export interface Flag {
  readonly flag: string;
  readonly description: string;
  readonly default?: boolean;
}

/** The flags more than one command takes. */
export const SHARED_FLAGS = {
  json: { flag: '--json', description: 'Print JSON', default: false },
  yes: { flag: '-y, --yes', description: 'Do not ask', default: false },
  port: { flag: '-p, --port', description: `Port the gateway listens on (env SVC_PORT; default ${DEFAULT_PORT}; 0 picks a free port)` },
  host: { flag: '-H, --host', description: 'Interface to listen on (env SVC_HOST; default 127.0.0.1)' },
  'data-dir': { flag: '--data-dir', description: 'Where state and the owner token live (env SVC_DATA_DIR; default ~/.svc/data)' },
  'base-domain': {
    flag: '--base-domain',
    description: 'Also serve host-based URLs <app>-<workload>.<domain> (env SVC_BASE_DOMAIN; e.g. localhost)',
  },
  config: { flag: '-c, --config', description: 'A JSON config file (env SVC_CONFIG); see docs/configuration.md' },
  server: { flag: '--server', description: 'The server to sign in to (default: SVC_SERVER, the saved server, else http://127.0.0.1:7420)' },
  'no-browser': { flag: '--no-browser', description: 'Print the link only; do not open a browser' },
  'from-dotenv': { flag: '--from-dotenv', description: 'Read KEY=VALUE lines from this dotenv file' },
  plugin: { flag: '--plugin', description: 'A plugin module (path or package) whose transformJob hook also runs; repeatable' },
} as const satisfies Record<string, Flag>;

export type SharedFlag = keyof typeof SHARED_FLAGS;

/** A shared flag by name, a shared flag with this command's description, or a flag only this command takes. */
export type FlagUse = SharedFlag | readonly [SharedFlag, string] | Flag;

export interface CommandSpec {
  readonly describe: string;
  readonly flags?: readonly FlagUse[];
  readonly examples: readonly string[];
  readonly action: Handler;
}

export function flagOf(use: FlagUse): Flag {
  if (typeof use === 'string') return SHARED_FLAGS[use];
  if (Array.isArray(use)) {
    const [name, description] = use as readonly [SharedFlag, string];
    return { ...SHARED_FLAGS[name], description };
  }
  return use as Flag;
}

/** Declares `usage` (`app pause <app>`) to sade: its flags in the order listed, then its examples. */
export function declareCommand(prog: Sade, usage: string, spec: CommandSpec): void {
  prog.command(usage).describe(spec.describe);
  for (const flag of (spec.flags ?? []).map(flagOf)) {
    if (flag.default === undefined) prog.option(flag.flag, flag.description);
    else prog.option(flag.flag, flag.description, flag.default);
  }
  for (const example of spec.examples) prog.example(example);
  // Each argument as it was typed: a lone "-" (standard output, `svc volume get … -`) comes back from LONE_DASH.
  prog.action((...args: unknown[]) => spec.action(...args.map((arg) => (arg === LONE_DASH ? '-' : arg))));
}

/**
 * The argument parser (mri) drops a lone "-" from the command line; `withLoneDash` passes it through as
 * this (a NUL cannot be in an argument), and each command's action is given "-" again.
 */
export const LONE_DASH = '\0-';

/** The command line with each lone "-" as LONE_DASH, for the parser. */
export const withLoneDash = (argv: readonly string[]): string[] => argv.map((arg) => (arg === '-' ? LONE_DASH : arg));

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../core/model/errors.js';
import { resolveCluster } from './cluster-schema.js';
import { configFileProblems } from './file-schema.js';
import { checkTls } from './tls-schema.js';
import { parseValue } from './value-rules.js';
import { configDefaults, configKeys, type ConfigKeySpec, type ServerConfig } from './schema.js';

export type ConfigInput = Partial<Record<keyof ServerConfig, unknown>>;

export interface LoadConfigOptions {
  /** Values from command-line flags (undefined = not given). */
  readonly flags?: ConfigInput;
  readonly env?: NodeJS.ProcessEnv;
  /** A JSON config file: --config, else SVC_CONFIG. */
  readonly file?: string;
  readonly cwd?: string;
}

/**
 * Merges flags > SVC_* environment > config file > defaults and validates
 * the result, reporting every bad value at once with where it came from.
 */
export function loadConfig(options: LoadConfigOptions = {}): ServerConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const fileName = options.file ?? env.SVC_CONFIG;
  const fromFile = fileName ? readConfigFile(path.resolve(cwd, fileName)) : {};
  const defaults = configDefaults();
  const problems: string[] = [];
  const result: Record<string, unknown> = { ...defaults };
  const explicit = new Set<string>();

  for (const [key, spec] of Object.entries(configKeys) as [keyof ServerConfig, ConfigKeySpec][]) {
    const flag = options.flags?.[key];
    const envName = [spec.env, spec.fallbackEnv].find((name) => name && env[name] !== undefined && env[name] !== '');
    // A password may also come from a file (`<VAR>_FILE`), as Nomad templates and Docker secrets deliver them.
    const fileVar = spec.kind === 'password' && spec.env !== null && env[`${spec.env}_FILE`] ? `${spec.env}_FILE` : undefined;
    const [raw, source] =
      flag !== undefined
        ? [flag, `--${kebab(key)}`]
        : envName
          ? [env[envName], envName]
          : fileVar
            ? [readSecretFile(path.resolve(cwd, env[fileVar]!), fileVar, problems), fileVar]
            : key in fromFile
              ? [fromFile[key], `${fileName}: ${key}`]
              : [undefined, ''];
    if (raw === undefined) continue;
    const inFile = source.startsWith(`${fileName}:`);
    if ((spec.kind === 'secret' || spec.kind === 'password') && inFile) {
      problems.push(
        `${source}: a ${spec.kind === 'secret' ? 'token' : 'password'} does not belong in a config file; set ${spec.env}${spec.fallbackEnv ? ` (or ${spec.fallbackEnv})` : ''} in svc's environment instead`,
      );
      continue;
    }
    // Relative paths in a config file mean "next to the file", wherever svc is started.
    const base = inFile ? path.dirname(path.resolve(cwd, fileName!)) : cwd;
    const parsed = parseValue(spec, raw, base);
    if (typeof parsed === 'object' && parsed !== null && 'problem' in parsed) problems.push(`${source}: ${parsed.problem}`);
    else {
      result[key] = parsed;
      explicit.add(key);
    }
  }
  if (problems.length === 0)
    problems.push(...resolveCluster(result as unknown as ServerConfig, explicit), ...checkTls(result as unknown as ServerConfig));
  if (fileName) problems.push(...configFileProblems(fromFile).problems.map((problem) => `${fileName}: ${problem}`));
  if (problems.length > 0) {
    throw new SvcError('config_invalid', `invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`, {
      details: { problems },
      hint: 'See docs/configuration.md for every setting.',
    });
  }
  return Object.freeze(result) as unknown as ServerConfig;
}

/** A password file's text without the one line end editors and `echo` add; undefined (and a problem) when unreadable. */
function readSecretFile(file: string, variable: string, problems: string[]): string | undefined {
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    problems.push(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    return undefined;
  }
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SvcError(
      'config_invalid',
      `cannot read the config file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SvcError('config_invalid', `the config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!configFileProblems(value).object) throw new SvcError('config_invalid', `the config file ${file} must hold a JSON object`);
  return value as Record<string, unknown>;
}

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

import { isIP } from 'node:net';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../core/model/errors.js';
import { parseImageReference, parseRegistryTarget } from '../core/infra/images/oci/reference.js';
import { resolveCluster } from './cluster-schema.js';
import { configFileProblems } from './file-schema.js';
import { checkTls } from './tls-schema.js';
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

type Parsed = unknown | { problem: string };

function parseValue(spec: ConfigKeySpec, raw: unknown, cwd: string): Parsed {
  switch (spec.kind) {
    case 'enum': {
      const values = spec.values ?? [];
      const value = typeof raw === 'string' ? raw.trim() : raw;
      return typeof value === 'string' && values.includes(value)
        ? value
        : { problem: `expected one of ${values.map((v) => `"${v}"`).join(', ')}, got ${JSON.stringify(raw)}` };
    }
    case 'secret':
      return typeof raw === 'string' && raw.trim() !== '' && !/\s/.test(raw.trim())
        ? raw.trim()
        : { problem: 'expected a token (its secret ID), without spaces' };
    case 'password':
      // Taken as written (spaces and all): only an empty value is refused.
      return typeof raw === 'string' && raw !== '' ? raw : { problem: 'expected a password or access token, not an empty value' };
    case 'list': {
      const items = typeof raw === 'string' ? raw.split(',').map((item) => item.trim()) : raw;
      if (Array.isArray(items) && items.length > 0 && items.every((item) => typeof item === 'string' && /^[A-Za-z0-9_*.-]+$/.test(item)))
        return Object.freeze([...items]);
      return {
        problem: `expected a non-empty list of names (letters, digits, - _ . *; comma-separated in the environment), got ${JSON.stringify(raw)}`,
      };
    }
    case 'mhz': {
      const mhz = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      return Number.isInteger(mhz) && mhz >= 100 && mhz <= 100_000
        ? mhz
        : { problem: `expected whole MHz per core from 100 to 100000 (your Nomad clients' cpu.frequency), got ${JSON.stringify(raw)}` };
    }
    case 'agentUrl': {
      // CONSUL_HTTP_ADDR is often host:port without a scheme, as Consul's CLI accepts it.
      const text = typeof raw === 'string' ? raw.trim() : '';
      const url = /^[a-z]+:\/\//i.test(text) ? text : text === '' ? '' : `http://${text}`;
      if (/^https?:\/\/[^\s/?#]+\/*$/.test(url)) return url.replace(/\/+$/, '');
      return {
        problem: `expected an agent address such as http://127.0.0.1:4646 (scheme, host and port; no path), got ${JSON.stringify(raw)}`,
      };
    }
    case 'kvPrefix': {
      const prefix = typeof raw === 'string' ? raw.trim() : '';
      return /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*\/$/.test(prefix)
        ? prefix
        : {
            problem: `expected a Consul KV prefix such as svc/ or teams/ml/svc/ (letters, digits, - and _ segments, ending in /, no leading /), got ${JSON.stringify(raw)}`,
          };
    }
    case 'port': {
      const port = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      return Number.isInteger(port) && port >= 0 && port <= 65535
        ? port
        : { problem: `port must be a whole number from 0 to 65535 (0 picks a free port), got ${JSON.stringify(raw)}` };
    }
    case 'bytes': {
      const bytes = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      return Number.isSafeInteger(bytes) && bytes >= 1024
        ? bytes
        : { problem: `expected a whole number of bytes, at least 1024 (e.g. 33554432 for 32 MiB), got ${JSON.stringify(raw)}` };
    }
    case 'seconds': {
      const seconds = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
      return Number.isFinite(seconds) && seconds >= 0.1 && seconds <= 3600
        ? seconds
        : { problem: `expected a number of seconds from 0.1 to 3600, got ${JSON.stringify(raw)}` };
    }
    case 'domain': {
      if (raw === null) return null;
      const domain = typeof raw === 'string' ? raw.trim().toLowerCase().replace(/\.$/, '') : '';
      return isDomainName(domain)
        ? domain
        : { problem: `expected a DNS name such as svc.example.com or localhost (no scheme, port or path), got ${JSON.stringify(raw)}` };
    }
    case 'hostPort': {
      if (raw === null) return null;
      // What Node's Resolver#setServers takes: an IPv4 address or a bracketed IPv6 one, with a port.
      const text = typeof raw === 'string' ? raw.trim() : '';
      if ((ipPortOf(text) ?? 0) >= 1) return text;
      return { problem: `expected a DNS server as ip:port, such as 127.0.0.1:53 or [::1]:53, got ${JSON.stringify(raw)}` };
    }
    case 'listenAddress': {
      if (raw === null) return null;
      // What a listener binds: an IPv4 address or a bracketed IPv6 one, with a port (0 picks a free one).
      const text = typeof raw === 'string' ? raw.trim() : '';
      if (ipPortOf(text) !== null) return text;
      return {
        problem: `expected an address to listen on as ip:port, such as 127.0.0.1:9464 or [::1]:9464 (port 0 picks a free one), got ${JSON.stringify(raw)}`,
      };
    }
    case 'path':
      return typeof raw === 'string' && raw.trim() !== ''
        ? path.resolve(cwd, expandHome(raw.trim()))
        : { problem: `expected a folder path, got ${JSON.stringify(raw)}` };
    case 'existingFolder': {
      // A typo here would turn the limits off without a word: the folder must be there.
      if (raw === null) return null;
      if (typeof raw !== 'string' || raw.trim() === '') return { problem: `expected a folder path or null, got ${JSON.stringify(raw)}` };
      const folder = path.resolve(cwd, expandHome(raw.trim()));
      return statSync(folder, { throwIfNoEntry: false })?.isDirectory()
        ? folder
        : { problem: `${folder} is not a folder on this machine (it should be ${spec.what})` };
    }
    case 'existingFile': {
      // Read at start; a path that names nothing is better said now, with the other problems.
      if (raw === null) return null;
      if (typeof raw !== 'string' || raw.trim() === '') return { problem: `expected a file path or null, got ${JSON.stringify(raw)}` };
      const file = path.resolve(cwd, expandHome(raw.trim()));
      return statSync(file, { throwIfNoEntry: false })?.isFile()
        ? file
        : { problem: `${file} is not a file on this machine (it should be ${spec.what})` };
    }
    case 'optionalPort':
      return raw === null ? null : parseValue({ ...spec, kind: 'port' }, raw, cwd);
    case 'boolean': {
      const text = typeof raw === 'string' ? raw.trim().toLowerCase() : raw;
      if (text === true || text === 'true' || text === '1') return true;
      if (text === false || text === 'false' || text === '0') return false;
      return { problem: `expected true or false, got ${JSON.stringify(raw)}` };
    }
    case 'string':
      return typeof raw === 'string' && raw.trim() !== ''
        ? raw.trim()
        : { problem: `expected a non-empty string, got ${JSON.stringify(raw)}` };
    case 'url':
      if (raw === null) return null;
      if (typeof raw === 'string' && /^https?:\/\/[^\s/]+/.test(raw)) return raw.replace(/\/+$/, '');
      return { problem: `expected an http(s) URL such as https://svc.example.com, got ${JSON.stringify(raw)}` };
    case 'origin':
      if (raw === null) return null;
      // Only the scheme, host and port are used: a path would be dropped without a word.
      if (typeof raw === 'string' && /^https?:\/\/[^\s/?#]+\/*$/.test(raw)) return raw.replace(/\/+$/, '');
      return { problem: `expected an http(s) URL with no path, such as http://10.0.0.7:7420, got ${JSON.stringify(raw)}` };
    case 'imageRegistry': {
      if (raw === null) return null;
      const target =
        typeof raw === 'string'
          ? parseRegistryTarget(raw)
          : { problem: `expected a registry such as registry.example.com:5000/svc, got ${JSON.stringify(raw)}` };
      return 'problem' in target ? target : String(raw).trim().replace(/\/+$/, '');
    }
    case 'baseImage': {
      if (typeof raw !== 'string' || raw.trim() === '')
        return { problem: `expected an image name such as python:{python}-slim, got ${JSON.stringify(raw)}` };
      try {
        // {python} is filled in per image: check the name with a version in its place.
        parseImageReference(raw.trim().split('{python}').join('3.11'));
        return raw.trim();
      } catch (error) {
        return { problem: (error as Error).message };
      }
    }
    case 'plugins':
      if (
        Array.isArray(raw) &&
        raw.every(
          (p) => typeof p === 'string' || (typeof p === 'object' && p !== null && typeof (p as { module?: unknown }).module === 'string'),
        )
      ) {
        return raw.map((spec: string | { module: string; options?: unknown }) =>
          typeof spec === 'string' ? resolveLocal(spec, cwd) : { ...spec, module: resolveLocal(spec.module, cwd) },
        );
      }
      return { problem: 'plugins must be a list of module names or paths, or {"module": "...", "options": {...}} objects' };
    default:
      return { problem: `unknown kind ${spec.kind}` };
  }
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

/** Dot-separated hostname labels (letters, digits, inner hyphens), 253 characters at most. */
function isDomainName(name: string): boolean {
  if (name === '' || name.length > 253) return false;
  return name.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
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

/** Plugin paths (./x, ../x) become absolute; package names stay as they are. */
function resolveLocal(spec: string, base: string): string {
  return spec.startsWith('./') || spec.startsWith('../') ? path.resolve(base, spec) : spec;
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(process.env.HOME ?? '', p.slice(1)) : p;
}

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The port of `ip:port` (an IPv4 address or a bracketed IPv6 one; port 0 to 65535), or null when it is not one. */
function ipPortOf(text: string): number | null {
  const match = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9a-fA-F:]+)\]):(\d{1,5})$/.exec(text);
  if (match === null || isIP(match[1] ?? match[2] ?? '') === 0) return null;
  const port = Number(match[3]);
  return port <= 65535 ? port : null;
}

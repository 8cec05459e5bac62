/**
 * What each kind of config value may be (config/schema.ts names a kind per key). One rule per kind,
 * declared once and shared by the config file, SVC_* variables and flags: the file gives JSON values,
 * the environment and flags give strings, so every rule takes both. The file schema (file-schema.ts)
 * only says which keys a file may hold.
 */
import { checkQuota, QUOTA_KEYS } from '../core/model/quotas.js';
import { nameProblem } from '../core/model/names.js';
import { PRICE_KEYS } from '../core/services/usage/prices.js';
import { isIP } from 'node:net';
import { statSync } from 'node:fs';
import path from 'node:path';
import { parseImageReference, parseRegistryTarget } from '../core/infra/images/oci/reference.js';
import type { ConfigKeySpec } from './schema.js';

/** A value as svc will use it, or what is wrong with the given one (without where it came from). */
export type Parsed = unknown | { problem: string };

/** `cwd` is where relative paths start: the config file's folder for a value from the file. */
type ValueRule = (raw: unknown, spec: ConfigKeySpec, cwd: string) => Parsed;

/** Parses one key's value by the rule of its kind. */
export function parseValue(spec: ConfigKeySpec, raw: unknown, cwd: string): Parsed {
  const rule = Object.hasOwn(valueRules, spec.kind) ? valueRules[spec.kind] : undefined;
  return rule === undefined ? { problem: `unknown kind ${spec.kind}` } : rule(raw, spec, cwd);
}

/** A rule for a setting that null turns off (in the file): null passes as it is, anything else goes to `rule`. */
const orNull =
  (rule: ValueRule): ValueRule =>
  (raw, spec, cwd) =>
    raw === null ? null : rule(raw, spec, cwd);

/** A number as given, or the digits of a string; NaN for anything else (the range is each rule's). */
const wholeNumber = (raw: unknown): number =>
  typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;

const port: ValueRule = (raw) => {
  const value = wholeNumber(raw);
  return Number.isInteger(value) && value >= 0 && value <= 65535
    ? value
    : { problem: `port must be a whole number from 0 to 65535 (0 picks a free port), got ${JSON.stringify(raw)}` };
};

const valueRules: Readonly<Record<string, ValueRule>> = {
  enum: (raw, spec) => {
    const values = spec.values ?? [];
    const value = typeof raw === 'string' ? raw.trim() : raw;
    return typeof value === 'string' && values.includes(value)
      ? value
      : { problem: `expected one of ${values.map((v) => `"${v}"`).join(', ')}, got ${JSON.stringify(raw)}` };
  },
  secret: (raw) =>
    typeof raw === 'string' && raw.trim() !== '' && !/\s/.test(raw.trim())
      ? raw.trim()
      : { problem: 'expected a token (its secret ID), without spaces' },
  // Taken as written (spaces and all): only an empty value is refused.
  password: (raw) => (typeof raw === 'string' && raw !== '' ? raw : { problem: 'expected a password or access token, not an empty value' }),
  list: (raw) => {
    const items = typeof raw === 'string' ? raw.split(',').map((item) => item.trim()) : raw;
    if (Array.isArray(items) && items.length > 0 && items.every((item) => typeof item === 'string' && /^[A-Za-z0-9_*.-]+$/.test(item)))
      return Object.freeze([...items]);
    return {
      problem: `expected a non-empty list of names (letters, digits, - _ . *; comma-separated in the environment), got ${JSON.stringify(raw)}`,
    };
  },
  // Values a plugin reads as it likes: any text, kept as written. JSON in the environment (an object is
  // the one shape that holds any key and value without a separator of its own). Kept as [name, value]
  // pairs: an object with a key "problem" would read as this file's refusal.
  stringMap: (raw) => {
    let value: unknown = raw;
    if (typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch {
        value = undefined;
      }
    }
    const entries = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : null;
    if (entries !== null && entries.length <= 64 && entries.every(([key, item]) => key.trim() !== '' && typeof item === 'string'))
      return Object.freeze(entries.map(([key, item]) => Object.freeze([key, item as string] as const)));
    return {
      problem: `expected an object of at most 64 names and their text values, such as {"type": "gp3"} (JSON in the environment), got ${JSON.stringify(raw)}`,
    };
  },
  mhz: (raw) => {
    const mhz = wholeNumber(raw);
    return Number.isInteger(mhz) && mhz >= 100 && mhz <= 100_000
      ? mhz
      : { problem: `expected whole MHz per core from 100 to 100000 (your Nomad clients' cpu.frequency), got ${JSON.stringify(raw)}` };
  },
  agentUrl: (raw) => {
    // CONSUL_HTTP_ADDR is often host:port without a scheme, as Consul's CLI accepts it.
    const text = typeof raw === 'string' ? raw.trim() : '';
    const url = /^[a-z]+:\/\//i.test(text) ? text : text === '' ? '' : `http://${text}`;
    if (/^https?:\/\/[^\s/?#]+\/*$/.test(url)) return url.replace(/\/+$/, '');
    return {
      problem: `expected an agent address such as http://127.0.0.1:4646 (scheme, host and port; no path), got ${JSON.stringify(raw)}`,
    };
  },
  kvPrefix: (raw) => {
    const prefix = typeof raw === 'string' ? raw.trim() : '';
    return /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*\/$/.test(prefix)
      ? prefix
      : {
          problem: `expected a Consul KV prefix such as svc/ or teams/ml/svc/ (letters, digits, - and _ segments, ending in /, no leading /), got ${JSON.stringify(raw)}`,
        };
  },
  port,
  optionalPort: orNull(port),
  bytes: (raw) => {
    const bytes = wholeNumber(raw);
    return Number.isSafeInteger(bytes) && bytes >= 1024
      ? bytes
      : { problem: `expected a whole number of bytes, at least 1024 (e.g. 33554432 for 32 MiB), got ${JSON.stringify(raw)}` };
  },
  seconds: (raw) => {
    const seconds = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
    return Number.isFinite(seconds) && seconds >= 0.1 && seconds <= 3600
      ? seconds
      : { problem: `expected a number of seconds from 0.1 to 3600, got ${JSON.stringify(raw)}` };
  },
  count: (raw) => {
    const count = wholeNumber(raw);
    return Number.isInteger(count) && count >= 1 && count <= 10_000
      ? count
      : { problem: `expected a whole number from 1 to 10000, got ${JSON.stringify(raw)}` };
  },
  retentionSeconds: (raw) => {
    const seconds = wholeNumber(raw);
    return Number.isInteger(seconds) && seconds >= 60 && seconds <= 31_536_000
      ? seconds
      : { problem: `expected whole seconds from 60 (a minute) to 31536000 (a year), e.g. 86400 for a day, got ${JSON.stringify(raw)}` };
  },
  domain: orNull((raw) => {
    const domain = typeof raw === 'string' ? raw.trim().toLowerCase().replace(/\.$/, '') : '';
    return isDomainName(domain)
      ? domain
      : { problem: `expected a DNS name such as svc.example.com or localhost (no scheme, port or path), got ${JSON.stringify(raw)}` };
  }),
  // What Node's Resolver#setServers takes: an IPv4 address or a bracketed IPv6 one, with a port.
  hostPort: orNull((raw) => {
    const text = typeof raw === 'string' ? raw.trim() : '';
    if ((ipPortOf(text) ?? 0) >= 1) return text;
    return { problem: `expected a DNS server as ip:port, such as 127.0.0.1:53 or [::1]:53, got ${JSON.stringify(raw)}` };
  }),
  // What a listener binds: an IPv4 address or a bracketed IPv6 one, with a port (0 picks a free one).
  listenAddress: orNull((raw) => {
    const text = typeof raw === 'string' ? raw.trim() : '';
    if (ipPortOf(text) !== null) return text;
    return {
      problem: `expected an address to listen on as ip:port, such as 127.0.0.1:9464 or [::1]:9464 (port 0 picks a free one), got ${JSON.stringify(raw)}`,
    };
  }),
  path: (raw, _spec, cwd) =>
    typeof raw === 'string' && raw.trim() !== ''
      ? path.resolve(cwd, expandHome(raw.trim()))
      : { problem: `expected a folder path, got ${JSON.stringify(raw)}` },
  // A typo here would turn the limits off without a word: the folder must be there.
  existingFolder: orNull((raw, spec, cwd) => {
    if (typeof raw !== 'string' || raw.trim() === '') return { problem: `expected a folder path or null, got ${JSON.stringify(raw)}` };
    const folder = path.resolve(cwd, expandHome(raw.trim()));
    return statSync(folder, { throwIfNoEntry: false })?.isDirectory()
      ? folder
      : { problem: `${folder} is not a folder on this machine (it should be ${spec.what})` };
  }),
  // Read at start; a path that names nothing is better said now, with the other problems.
  existingFile: orNull((raw, spec, cwd) => {
    if (typeof raw !== 'string' || raw.trim() === '') return { problem: `expected a file path or null, got ${JSON.stringify(raw)}` };
    const file = path.resolve(cwd, expandHome(raw.trim()));
    return statSync(file, { throwIfNoEntry: false })?.isFile()
      ? file
      : { problem: `${file} is not a file on this machine (it should be ${spec.what})` };
  }),
  boolean: (raw) => {
    const text = typeof raw === 'string' ? raw.trim().toLowerCase() : raw;
    if (text === true || text === 'true' || text === '1') return true;
    if (text === false || text === 'false' || text === '0') return false;
    return { problem: `expected true or false, got ${JSON.stringify(raw)}` };
  },
  string: (raw) =>
    typeof raw === 'string' && raw.trim() !== '' ? raw.trim() : { problem: `expected a non-empty string, got ${JSON.stringify(raw)}` },
  url: orNull((raw) => {
    if (typeof raw === 'string' && /^https?:\/\/[^\s/]+/.test(raw)) return raw.replace(/\/+$/, '');
    return { problem: `expected an http(s) URL such as https://svc.example.com, got ${JSON.stringify(raw)}` };
  }),
  // Only the scheme, host and port are used: a path would be dropped without a word.
  origin: orNull((raw) => {
    if (typeof raw === 'string' && /^https?:\/\/[^\s/?#]+\/*$/.test(raw)) return raw.replace(/\/+$/, '');
    return { problem: `expected an http(s) URL with no path, such as http://10.0.0.7:7420, got ${JSON.stringify(raw)}` };
  }),
  imageRegistry: orNull((raw) => {
    const target =
      typeof raw === 'string'
        ? parseRegistryTarget(raw)
        : { problem: `expected a registry such as registry.example.com:5000/svc, got ${JSON.stringify(raw)}` };
    return 'problem' in target ? target : String(raw).trim().replace(/\/+$/, '');
  }),
  baseImage: (raw) => {
    if (typeof raw !== 'string' || raw.trim() === '')
      return { problem: `expected an image name such as python:{python}-slim, got ${JSON.stringify(raw)}` };
    try {
      // {python} is filled in per image: check the name with a version in its place.
      parseImageReference(raw.trim().split('{python}').join('3.11'));
      return raw.trim();
    } catch (error) {
      return { problem: (error as Error).message };
    }
  },
  quotas: (raw) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      return {
        problem: `expected an object from workspace name (or "*" for the others) to {${QUOTA_KEYS.map((key) => `"${key}"`).join(', ')}}`,
      };
    }
    for (const [workspace, quota] of Object.entries(raw)) {
      // A name no workspace can have would never apply, and nothing would say so.
      const misnamed = workspace === '*' ? null : nameProblem(workspace);
      if (misnamed !== null)
        return {
          problem: `${JSON.stringify(workspace)} is no workspace name (${misnamed}); use "*" for every workspace the table does not name`,
        };
      const checked = checkQuota(quota, `the quota of ${JSON.stringify(workspace)}`);
      if ('problem' in checked) return checked;
    }
    return raw;
  },
  prices: (raw) => {
    if (raw === null) return null;
    const shape = 'expected {"currency": "USD", "cpuSecond": <price>, "memoryGiBSecond": <price>} or null';
    if (typeof raw !== 'object' || Array.isArray(raw)) return { problem: shape };
    const { currency, ...prices } = raw as Record<string, unknown>;
    if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) {
      return { problem: `currency must be a three-letter ISO 4217 code such as "USD", got ${JSON.stringify(currency)}` };
    }
    for (const [key, value] of Object.entries(prices)) {
      if (!(PRICE_KEYS as readonly string[]).includes(key))
        return { problem: `${JSON.stringify(key)} is not a price: it takes currency, ${PRICE_KEYS.join(', ')}` };
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        return { problem: `${key} must be a price per unit, 0 or more, got ${JSON.stringify(value)}` };
      }
    }
    if (Object.keys(prices).length === 0) return { problem: `give at least one of ${PRICE_KEYS.join(', ')} (${shape})` };
    return raw;
  },
  plugins: (raw, _spec, cwd) => {
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
  },
};

/** Dot-separated hostname labels (letters, digits, inner hyphens), 253 characters at most. */
function isDomainName(name: string): boolean {
  if (name === '' || name.length > 253) return false;
  return name.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
}

/** Plugin paths (./x, ../x) become absolute; package names stay as they are. */
function resolveLocal(spec: string, base: string): string {
  return spec.startsWith('./') || spec.startsWith('../') ? path.resolve(base, spec) : spec;
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(process.env.HOME ?? '', p.slice(1)) : p;
}

/** The port of `ip:port` (an IPv4 address or a bracketed IPv6 one; port 0 to 65535), or null when it is not one. */
function ipPortOf(text: string): number | null {
  const match = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9a-fA-F:]+)\]):(\d{1,5})$/.exec(text);
  if (match === null || isIP(match[1] ?? match[2] ?? '') === 0) return null;
  const port = Number(match[3]);
  return port <= 65535 ? port : null;
}

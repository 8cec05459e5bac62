/**
 * pip's own settings (PIP_* variables, pip.conf), read the way pip reads
 * them, and turned into uv's flags: people already point pip at their index,
 * and an image built with uv must come from the same place.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** pip's merged configuration (`section.key` → value), from pip's own reader; empty when pip is missing. */
const READ_PIP_CONFIG = `
import json
try:
    from pip._internal.configuration import Configuration
    config = Configuration(isolated=False)
    config.load()
    merged = {}
    # pip 23 yields "section.key" pairs; newer pips yield each file's own dict, in the order they override.
    for key, value in config.items():
        if isinstance(value, dict):
            merged.update(value)
        else:
            merged[key] = value
    print(json.dumps(merged))
except Exception:
    print("{}")
`;

/** uv's own variables that choose where packages come from: when one is set, uv is configured and pip's settings are left out. */
const UV_INDEX_VARIABLES = ['UV_INDEX_URL', 'UV_DEFAULT_INDEX', 'UV_INDEX', 'UV_EXTRA_INDEX_URL', 'UV_FIND_LINKS', 'UV_NO_INDEX'];

export interface UvSettings {
  /** Flags for `uv pip install`. */
  readonly args: readonly string[];
  /** Variables added to uv's environment (only those the environment does not already set). */
  readonly env: Readonly<Record<string, string>>;
  /** For the build log: what was taken from pip, credentials hidden. */
  readonly described: readonly string[];
}

const cache = new Map<string, Promise<Record<string, string>>>();

/** pip's settings as `python` (the interpreter images are built from) sees them with `env`; read once per process for each. */
export function readPipConfig(python: string, env: NodeJS.ProcessEnv = process.env): Promise<Record<string, string>> {
  const pipEnv = Object.entries(env).filter(([name]) => name.startsWith('PIP_'));
  const key = JSON.stringify([python, pipEnv]);
  let found = cache.get(key);
  if (!found) {
    found = run(python, ['-c', READ_PIP_CONFIG], { timeout: 30_000, env })
      .then(({ stdout }) => JSON.parse(stdout) as Record<string, string>)
      .catch(() => ({}));
    cache.set(key, found);
  }
  return found;
}

/** A setting as `pip install` takes it: the environment over the `[install]` section over `[global]`. */
function setting(config: Readonly<Record<string, string>>, key: string): string | undefined {
  return config[`:env:.${key}`] ?? config[`install.${key}`] ?? config[`global.${key}`];
}

/** pip's multi-valued settings are whitespace-separated lists. */
function list(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(/\s+/).filter(Boolean);
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/** `https://user:secret@host/simple` → `https://***@host/simple`: the build log is shown to every member. */
export function hideCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

/** uv's flags and variables for pip's settings, unless uv's own variables already choose the index. */
export function uvSettingsFrom(config: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv = process.env): UvSettings {
  const args: string[] = [];
  const added: Record<string, string> = {};
  const described: string[] = [];
  if (!UV_INDEX_VARIABLES.some((name) => env[name] !== undefined && env[name] !== '')) {
    const index = setting(config, 'index-url');
    if (index !== undefined) {
      args.push('--index-url', index);
      described.push(`index-url ${hideCredentials(index)}`);
    }
    for (const extra of list(setting(config, 'extra-index-url'))) {
      args.push('--extra-index-url', extra);
      described.push(`extra-index-url ${hideCredentials(extra)}`);
    }
    for (const links of list(setting(config, 'find-links'))) {
      args.push('--find-links', links);
      described.push(`find-links ${hideCredentials(links)}`);
    }
    if (truthy(setting(config, 'no-index'))) {
      args.push('--no-index');
      described.push('no-index');
    }
  }
  for (const host of list(setting(config, 'trusted-host'))) {
    args.push('--allow-insecure-host', host);
    described.push(`trusted-host ${host}`);
  }
  const cert = setting(config, 'cert');
  if (cert !== undefined && !env.SSL_CERT_FILE) {
    added.SSL_CERT_FILE = cert;
    described.push(`cert ${cert}`);
  }
  const timeout = setting(config, 'timeout') ?? setting(config, 'default-timeout');
  if (timeout !== undefined && /^\d+(\.\d+)?$/.test(timeout) && !env.UV_HTTP_TIMEOUT)
    added.UV_HTTP_TIMEOUT = String(Math.ceil(Number(timeout)));
  return { args, env: added, described };
}

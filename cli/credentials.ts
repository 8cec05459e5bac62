/**
 * Which server, which token (docs/cli.md "Which server, which token"): each
 * value on its own, first match wins —
 *   1. the environment: SVC_SERVER, SVC_TOKEN;
 *   2. the credentials file `svc login` writes: `$SVC_CONFIG_DIR/credentials.json`
 *      (default `~/.svc`), mode 0600 in a 0700 folder;
 *   3. a server on this machine: `http://127.0.0.1:$SVC_PORT` (default 7420) with the
 *      owner token in `<$SVC_DATA_DIR or ~/.svc/data>/owner-token`.
 * A saved token goes only to the server it belongs to: the file's token to the
 * file's server, the owner token to this machine's; SVC_SERVER naming another
 * server needs SVC_TOKEN. No token is `not_signed_in`. A damaged credentials
 * file is `config_invalid` naming the file, never silently skipped.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_PORT } from '../config/schema.js';
import { readPrivateFile } from '../core/infra/files/private-file.js';
import { looksLikeToken } from '../core/services/auth/tokens.js';
import { SvcError } from '../core/model/errors.js';

export const CREDENTIALS_FILE = 'credentials.json';
export const CREDENTIALS_VERSION = 1;

/** What `svc login` saves. */
export interface StoredCredentials {
  readonly version: 1;
  readonly server: string;
  readonly token: string;
  readonly workspace: string | null;
  readonly savedAt: string;
}

/** Where a value came from, said the way people set it: `SVC_TOKEN`, the file's path, the owner token's path. */
export interface Source {
  readonly kind: 'env' | 'file' | 'local';
  readonly description: string;
}

export interface ResolvedServer {
  readonly url: string;
  readonly source: Source;
}

export interface ResolvedCredentials {
  readonly server: string;
  readonly token: string;
  /** The workspace the credentials file names, when the token came from it. */
  readonly workspace: string | null;
  readonly sources: { readonly server: Source; readonly token: Source };
  /** What the user should know (a credentials file open to others was tightened). */
  readonly warnings: readonly string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** `$SVC_CONFIG_DIR`, else `~/.svc`. */
export function configDir(env: Env = process.env): string {
  const dir = nonEmpty(env.SVC_CONFIG_DIR);
  return dir === null ? path.join(os.homedir(), '.svc') : path.resolve(expandHome(dir));
}

export function credentialsPath(env: Env = process.env): string {
  return path.join(configDir(env), CREDENTIALS_FILE);
}

/** `$SVC_DATA_DIR`, else `~/.svc/data`: where a `svc server` on this machine keeps its owner token. */
export function localDataDir(env: Env = process.env): string {
  const dir = nonEmpty(env.SVC_DATA_DIR);
  return dir === null ? path.join(os.homedir(), '.svc', 'data') : path.resolve(expandHome(dir));
}

/** `http://127.0.0.1:$SVC_PORT` (default 7420). */
export function localServer(env: Env = process.env): string {
  const raw = nonEmpty(env.SVC_PORT);
  if (raw === null) return `http://127.0.0.1:${DEFAULT_PORT}`;
  const port = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new SvcError('config_invalid', `SVC_PORT must be a port from 1 to 65535, got ${JSON.stringify(raw)}`, {
      hint: 'Set SVC_PORT to the port your svc server listens on, or unset it for 7420.',
    });
  }
  return `http://127.0.0.1:${port}`;
}

/** A server URL as given (flag, SVC_SERVER, file): http(s), no trailing slash; `config_invalid` (or `usage_invalid` for a flag) otherwise. */
export function normalizeServerUrl(raw: string, where: string, code: 'config_invalid' | 'usage_invalid' = 'config_invalid'): string {
  const value = raw.trim();
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  if (
    url === null ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new SvcError(
      code,
      `${where} must be the http(s) base URL of an svc server, such as https://svc.example.com, got ${JSON.stringify(raw)}`,
      {
        hint: 'Give the scheme, the host and the port if it is not the default, without a query.',
      },
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The server alone, for `svc login`: SVC_SERVER, else the credentials file's, else this machine's. */
export async function resolveServer(env: Env = process.env): Promise<ResolvedServer> {
  const fromEnv = nonEmpty(env.SVC_SERVER);
  if (fromEnv !== null) return { url: normalizeServerUrl(fromEnv, 'SVC_SERVER'), source: { kind: 'env', description: 'SVC_SERVER' } };
  const file = credentialsPath(env);
  const stored = (await readCredentials(env))?.credentials ?? null;
  if (stored !== null) return { url: stored.server, source: { kind: 'file', description: file } };
  return { url: localServer(env), source: { kind: 'local', description: 'a server on this machine' } };
}

/** The server and the token, each on its own; `not_signed_in` when no token is found. */
export async function resolveCredentials(env: Env = process.env): Promise<ResolvedCredentials> {
  const file = credentialsPath(env);
  const read = await readCredentials(env);
  const stored = read?.credentials ?? null;
  const warnings = read?.warnings ?? [];

  const envServer = nonEmpty(env.SVC_SERVER);
  const server: ResolvedServer =
    envServer !== null
      ? { url: normalizeServerUrl(envServer, 'SVC_SERVER'), source: { kind: 'env', description: 'SVC_SERVER' } }
      : stored !== null
        ? { url: stored.server, source: { kind: 'file', description: file } }
        : { url: localServer(env), source: { kind: 'local', description: 'a server on this machine' } };

  const envToken = nonEmpty(env.SVC_TOKEN);
  if (envToken !== null) {
    return {
      server: server.url,
      token: envToken,
      workspace: null,
      sources: { server: server.source, token: { kind: 'env', description: 'SVC_TOKEN' } },
      warnings,
    };
  }
  // A saved token goes only to the server it was issued by: SVC_SERVER naming another one must not receive it.
  if (stored !== null && stored.server === server.url) {
    return {
      server: server.url,
      token: stored.token,
      workspace: stored.workspace,
      sources: { server: server.source, token: { kind: 'file', description: file } },
      warnings,
    };
  }
  const ownerFile = path.join(localDataDir(env), 'owner-token');
  const local = server.url === localServer(env);
  const owner = local
    ? await readOwnerToken(ownerFile)
    : { token: null, why: `the owner token of this machine is only sent to ${localServer(env)}` };
  if (owner.token !== null) {
    return {
      server: server.url,
      token: owner.token,
      workspace: null,
      sources: { server: server.source, token: { kind: 'local', description: ownerFile } },
      warnings,
    };
  }
  if (stored !== null) {
    throw new SvcError(
      'not_signed_in',
      `svc has no token for ${server.url}: SVC_TOKEN is not set, and the token in ${file} is for ${stored.server}.`,
      {
        hint: `Run \`svc login --server ${server.url}\`, or set SVC_TOKEN to a token of that server.`,
        details: { credentialsFile: file, ownerToken: ownerFile },
      },
    );
  }
  throw new SvcError('not_signed_in', `svc found no token: SVC_TOKEN is not set, there is no ${file}, and ${owner.why}.`, {
    hint: `Run \`svc login\` (or \`svc login --server <URL>\`), or set SVC_SERVER and SVC_TOKEN (a token from \`svc token create\`).`,
    details: { credentialsFile: file, ownerToken: ownerFile },
  });
}

/**
 * The credentials file, or null when there is none. A file open to other
 * users is tightened to 0600 (with a warning); a damaged one is `config_invalid`.
 */
export async function readCredentials(env: Env = process.env): Promise<{ credentials: StoredCredentials; warnings: string[] } | null> {
  const file = credentialsPath(env);
  const read = await readPrivateFile(
    file,
    (problem) => damaged(file, problem),
    'If others may have read it, run `svc logout` and `svc login` to replace the token.',
  );
  if (read === null) return null;
  return { credentials: parseCredentials(read.text, file), warnings: [...read.warnings] };
}

/** Checks the file's content field by field; `config_invalid` saying what is wrong. */
export function parseCredentials(text: string, file: string): StoredCredentials {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw damaged(file, `is not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw damaged(file, 'does not hold a JSON object');
  const record = value as Record<string, unknown>;
  if (record.version !== CREDENTIALS_VERSION) {
    const newer = typeof record.version === 'number' && record.version > CREDENTIALS_VERSION;
    throw damaged(
      file,
      newer
        ? `was written by a newer svc (version ${record.version}; this svc reads version ${CREDENTIALS_VERSION})`
        : `has no "version": ${CREDENTIALS_VERSION}`,
    );
  }
  if (typeof record.server !== 'string') throw damaged(file, 'has no "server" (a URL)');
  let server: string;
  try {
    server = normalizeServerUrl(record.server, `"server" in ${file}`);
  } catch {
    throw damaged(file, `has a "server" that is not an http(s) URL: ${JSON.stringify(record.server)}`);
  }
  if (typeof record.token !== 'string' || !/^[\x21-\x7e]+$/.test(record.token))
    throw damaged(file, 'has no "token" (a token string without spaces)');
  if (record.workspace !== undefined && record.workspace !== null && typeof record.workspace !== 'string')
    throw damaged(file, 'has a "workspace" that is not a string');
  return {
    version: CREDENTIALS_VERSION,
    server,
    token: record.token,
    workspace: typeof record.workspace === 'string' ? record.workspace : null,
    savedAt: typeof record.savedAt === 'string' ? record.savedAt : '',
  };
}

/**
 * Saves the credentials atomically: a private temp file (0600) in the same
 * folder, synced, then renamed over the old one, so a reader never sees half
 * a file. The folder is created 0700 (and tightened to 0700 when it is open to others).
 */
export async function writeCredentials(
  input: { server: string; token: string; workspace: string | null },
  env: Env = process.env,
): Promise<string> {
  const dir = configDir(env);
  const file = path.join(dir, CREDENTIALS_FILE);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await stat(dir);
  if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) await chmod(dir, 0o700);
  const record: StoredCredentials = {
    version: CREDENTIALS_VERSION,
    server: input.server,
    token: input.token,
    workspace: input.workspace,
    savedAt: new Date().toISOString(),
  };
  const temp = path.join(dir, `.${CREDENTIALS_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  return file;
}

/** Deletes the credentials file; false when there was none. */
export async function deleteCredentials(env: Env = process.env): Promise<boolean> {
  try {
    await unlink(credentialsPath(env));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** The owner token of a server on this machine, or why there is none. A damaged file is `config_invalid`, as for svc server. */
async function readOwnerToken(file: string): Promise<{ token: string; why?: undefined } | { token: null; why: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { token: null, why: `no svc server owner token in ${file}` };
    if (code === 'EACCES') return { token: null, why: `the owner token ${file} cannot be read by this user` };
    throw error;
  }
  const token = text.trim();
  if (!looksLikeToken(token)) {
    throw new SvcError('config_invalid', `${file} does not hold a valid svc token`, {
      hint: `Delete ${file} and restart svc server to create a new owner token, or set SVC_TOKEN.`,
      details: { path: file },
    });
  }
  return { token };
}

function damaged(file: string, problem: string): SvcError {
  return new SvcError('config_invalid', `the credentials file ${file} ${problem}.`, {
    hint: `Run \`svc login\` to write it again, or delete it (\`svc logout\`, or rm ${file}).`,
    details: { path: file },
  });
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function expandHome(dir: string): string {
  return dir === '~' ? os.homedir() : dir.startsWith('~/') ? path.join(os.homedir(), dir.slice(2)) : dir;
}

/**
 * Real certificates and real TLS clients for the HTTPS tests: self-signed
 * P-256 certificates made by Debian's `openssl` at test time (nothing to
 * expire in the repository), `openssl s_client` for what a handshake shows,
 * and `curl` for requests as a person makes them.
 */
import { execFile } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

/**
 * Writes `<dir>/<name>.crt` and `.key`: a self-signed certificate with CN
 * `cn` valid for `hosts` (the first is also the CN unless `cn` is given).
 * Written beside, then renamed into place, as renewal tools do.
 */
export async function makeCertificate(dir: string, name: string, hosts: readonly string[], cn = hosts[0]!): Promise<TestCertificate> {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  const tmp = path.join(dir, `.${name}-${process.hrtime.bigint()}`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '30',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    `subjectAltName=${hosts.map((host) => `DNS:${host}`).join(',')}`,
    '-keyout',
    `${tmp}.key`,
    '-out',
    `${tmp}.crt`,
  ]);
  renameSync(`${tmp}.key`, key);
  renameSync(`${tmp}.crt`, cert);
  return { cert, key };
}

/** Every name resolves to this machine (for clients that take a `lookup`, as curl takes --resolve). */
export const loopback: LookupFunction = (_host, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

/** Overwrites a file in place (not a rename): what a careless copy does. */
export function overwrite(file: string, text: string): void {
  writeFileSync(file, text);
}

/** The CN of the certificate the server at `port` hands a client naming `servername` (null: no SNI at all), as `openssl s_client` sees it. */
export async function servedCn(port: number, servername: string | null): Promise<string> {
  const sni = servername === null ? ['-noservername'] : ['-servername', servername];
  const stdout = await new Promise<string>((resolve) => {
    // Its stdin ends at once: s_client then closes the connection after the handshake.
    const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...sni], { timeout: 10_000 }, (_error, out) =>
      resolve(String(out)),
    );
    child.stdin?.end();
  });
  const cn = /^subject=.*CN ?= ?([^,\n]+)/m.exec(stdout)?.[1];
  if (cn === undefined) throw new Error(`openssl s_client to port ${port} (${servername ?? 'no SNI'}) showed no certificate:\n${stdout}`);
  return cn.trim();
}

/** `curl` with `host` resolved to this machine, trusting only `ca`: its status, body, and redirect target. */
export async function curl(
  url: string,
  options: { readonly ca?: string; readonly headers?: Record<string, string>; readonly maxTimeS?: number } = {},
): Promise<{ status: number; body: string; redirect: string }> {
  const target = new URL(url);
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  const args = [
    '-s',
    '--max-time',
    String(options.maxTimeS ?? 10),
    '--resolve',
    `${target.hostname}:${port}:127.0.0.1`,
    '-w',
    '\n%{http_code} %{redirect_url}',
  ];
  if (options.ca !== undefined) args.push('--cacert', options.ca);
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  const { stdout } = await run('curl', [...args, url]);
  const end = stdout.lastIndexOf('\n');
  const [status, redirect] = stdout.slice(end + 1).split(' ');
  return { status: Number(status), body: stdout.slice(0, end), redirect: redirect ?? '' };
}

/**
 * The gateway's certificates: the default one (`tlsCert`/`tlsKey`) and the
 * per-host ones of `tlsCertDir`, chosen by the name the client sends (SNI):
 * an exact name first, then a `*.` wildcard one label up, else the default.
 * Reloading reads every file again; a file that became bad keeps what was
 * served before from it (and says why), so a half-written renewal never
 * takes a host's HTTPS down. Each handshake reads the current contexts;
 * connections already open keep the one they started with.
 */
import { statSync } from 'node:fs';
import type tls from 'node:tls';
import { SvcError } from '../../../model/errors.js';
import { halfPairProblem, listCertificateDir } from './certificate-dir.js';
import { CertificateFileError, loadCertificate, type CertificateFiles, type LoadedCertificate } from './certificate-files.js';

export interface CertificateSources {
  /** The default certificate. */
  readonly cert: string;
  readonly key: string;
  /** The folder of per-host certificates; null: the default serves every host. */
  readonly dir: string | null;
}

export interface ReloadResult {
  /** Each file that could not be used, naming it; what it served before stays. */
  readonly problems: readonly string[];
  readonly summary: string;
}

export class Certificates {
  readonly #sources: CertificateSources;
  #default: LoadedCertificate;
  /** Per-host certificates by their `<name>` in the folder. */
  #byName = new Map<string, LoadedCertificate>();
  #byHost = new Map<string, LoadedCertificate>();

  /** Reads every file; any problem is `config_invalid` listing each one with its file. */
  static open(sources: CertificateSources): Certificates {
    const problems: string[] = [];
    let loaded: LoadedCertificate | null = null;
    try {
      loaded = loadCertificate({ cert: sources.cert, key: sources.key });
    } catch (error) {
      problems.push(messageOf(error));
    }
    const dir = loadDir(sources.dir, new Map());
    problems.push(...dir.problems);
    if (loaded === null || problems.length > 0) {
      throw new SvcError('config_invalid', `invalid TLS certificates:\n${problems.map((p) => `  - ${p}`).join('\n')}`, {
        details: { problems },
        hint: 'Each certificate is PEM (leaf first, then its chain) with its unencrypted PEM private key; see docs/domains.md#https.',
      });
    }
    return new Certificates(sources, loaded, dir.byName);
  }

  private constructor(sources: CertificateSources, loaded: LoadedCertificate, byName: Map<string, LoadedCertificate>) {
    this.#sources = sources;
    this.#default = loaded;
    this.#setDir(byName);
  }

  /** The default certificate's key and chain: the server's own options, served to clients that name no host or an unknown one. */
  get defaultOptions(): LoadedCertificate['options'] {
    return this.#default.options;
  }

  /** Every file svc reads, and the folder: what is watched for changes. */
  get watched(): { readonly files: readonly string[]; readonly dir: string | null } {
    return { files: [this.#sources.cert, this.#sources.key], dir: this.#sources.dir };
  }

  /** The context a handshake naming `servername` gets (Node's `SNICallback`). */
  readonly sniCallback = (servername: string, callback: (error: Error | null, context?: tls.SecureContext) => void): void => {
    callback(null, this.contextFor(servername));
  };

  contextFor(servername: string): tls.SecureContext {
    const host = servername.toLowerCase().replace(/\.$/, '');
    const dot = host.indexOf('.');
    return (this.#byHost.get(host) ?? (dot > 0 ? this.#byHost.get(`*${host.slice(dot)}`) : undefined) ?? this.#default).context;
  }

  /** Reads every file again. */
  reload(): ReloadResult {
    const problems: string[] = [];
    try {
      this.#default = loadCertificate({ cert: this.#sources.cert, key: this.#sources.key });
    } catch (error) {
      problems.push(`${messageOf(error)}; the default certificate from before stays`);
    }
    const dir = loadDir(this.#sources.dir, this.#byName);
    this.#setDir(dir.byName);
    problems.push(...dir.problems.map((problem) => `${problem}; what it served before stays`));
    return { problems, summary: this.summary() };
  }

  /** One line for the log: what serves which names. */
  summary(): string {
    const hosts = [...this.#byHost.keys()].sort();
    return (
      `TLS: default certificate ${this.#sources.cert} (${this.#default.names.join(', ') || 'no names'}, valid to ${this.#default.validTo})` +
      (this.#sources.dir === null ? '' : `; ${this.#byName.size} from ${this.#sources.dir} for ${hosts.join(', ') || 'no names'}`)
    );
  }

  #setDir(byName: Map<string, LoadedCertificate>): void {
    this.#byName = byName;
    this.#byHost = indexByHost(byName.values());
  }
}

/** Loads the folder's pairs; one that fails keeps its `previous` certificate. A pair whose files are both gone is dropped. */
function loadDir(
  dir: string | null,
  previous: ReadonlyMap<string, LoadedCertificate>,
): { byName: Map<string, LoadedCertificate>; problems: string[] } {
  const byName = new Map<string, LoadedCertificate>();
  if (dir === null) return { byName, problems: [] };
  let listing;
  try {
    if (!statSync(dir).isDirectory()) return { byName: new Map(previous), problems: [`${dir} is not a folder`] };
    listing = listCertificateDir(dir);
  } catch (error) {
    return {
      byName: new Map(previous),
      problems: [`cannot read the certificate folder ${dir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`],
    };
  }
  const problems: string[] = [];
  for (const [name, half] of listing) {
    try {
      if (half.cert === undefined || half.key === undefined) throw new CertificateFileError(halfPairProblem(name, half));
      byName.set(name, loadCertificate(half as CertificateFiles));
    } catch (error) {
      problems.push(messageOf(error));
      const before = previous.get(name);
      if (before !== undefined) byName.set(name, before);
    }
  }
  return { byName, problems };
}

/** Host name → certificate; where two cover a name, the one valid longest (a renewal beside the old file). */
function indexByHost(certificates: Iterable<LoadedCertificate>): Map<string, LoadedCertificate> {
  const byHost = new Map<string, LoadedCertificate>();
  for (const certificate of certificates) {
    for (const name of certificate.names) {
      const other = byHost.get(name);
      if (other === undefined || Date.parse(certificate.validTo) > Date.parse(other.validTo)) byHost.set(name, certificate);
    }
  }
  return byHost;
}

function messageOf(error: unknown): string {
  if (error instanceof CertificateFileError) return error.message;
  throw error;
}

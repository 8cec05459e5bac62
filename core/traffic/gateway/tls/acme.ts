/**
 * Certificates for custom domains over ACME (RFC 8555), with the maintained
 * `acme-client` package: once a domain is verified, svc orders a certificate
 * for it, answers the CA's HTTP-01 challenge on the plain-HTTP listener
 * (`/.well-known/acme-challenge/<token>`), and writes `<domain>.crt` and
 * `<domain>.key` into `tlsCertDir` (beside, then renamed into place), where
 * the certificate loader picks them up by SNI on its own. A certificate with
 * more than `RENEW_BEFORE_MS` left is kept; a daily pass renews the ones svc
 * obtained (marked `.acme-<domain>`) before they get there. The account key
 * lives in the data dir.
 */
import { X509Certificate } from 'node:crypto';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type acmeClient from 'acme-client';
import { SvcError } from '../../../model/errors.js';
import { ACME_CHALLENGE_PREFIX } from './https-redirect.js';

/** Renewed when less than this is left (Let's Encrypt's certificates last 90 days). */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;
/** `.acme-<domain>` beside the pair: a certificate svc obtained and renews (not one of the operator's files). */
const MARKER = '.acme-';

export interface AcmeOptions {
  readonly directoryUrl: string;
  readonly email: string | null;
  /** PEM of the CA that signed the ACME server's own certificate (a test CA); null: the machine's. */
  readonly ca: Buffer | null;
  /** `tlsCertDir`: where certificates go. */
  readonly certDir: string;
  /** Where the account key is kept (created on first use, 0600). */
  readonly accountKeyFile: string;
  readonly log: (text: string) => void;
  readonly report: (error: unknown) => void;
}

type AcmeClientModule = typeof acmeClient;

export class AcmeCertificates {
  readonly #options: AcmeOptions;
  /** token → key authorization, while a challenge is open. */
  readonly #challenges = new Map<string, string>();
  /** Orders in progress, by domain: a second ask waits for the first. */
  readonly #ordering = new Map<string, Promise<void>>();
  #client: Promise<acmeClient.Client> | null = null;
  /** acme-client, loaded on the first order: it costs 0.4 s of CPU, which every server start paid with or without ACME. */
  #module: Promise<AcmeClientModule> | null = null;
  #renewals: NodeJS.Timeout | undefined;

  constructor(options: AcmeOptions) {
    this.#options = options;
  }

  #acme(): Promise<AcmeClientModule> {
    this.#module ??= import('acme-client').then(({ default: acme }) => {
      // acme-client talks through its own axios instance: trust the ACME server's CA there only.
      if (this.#options.ca !== null) acme.axios.defaults.httpsAgent = new https.Agent({ ca: this.#options.ca });
      return acme;
    });
    return this.#module;
  }

  /** The plain listener's handler for `/.well-known/acme-challenge/<token>`. */
  readonly challenge = (req: IncomingMessage, res: ServerResponse): void => {
    const token = (req.url ?? '').slice(ACME_CHALLENGE_PREFIX.length).split('?')[0] ?? '';
    const answer = this.#challenges.get(token);
    if (answer === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('no such ACME challenge\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': Buffer.byteLength(answer) }).end(answer);
  };

  /** Starts the daily renewal pass over the certificates svc obtained. */
  start(): void {
    this.#renewals ??= setInterval(() => void this.#renewAll(), DAY_MS);
    this.#renewals.unref();
  }

  close(): void {
    clearInterval(this.#renewals);
  }

  /** Makes sure `domain` has a certificate with more than 30 days left, ordering one when not; errors are reported, not thrown. */
  ensure(domain: string): Promise<void> {
    const running = this.#ordering.get(domain);
    if (running) return running;
    const order = this.#ensure(domain)
      .catch((error: unknown) => {
        this.#options.report(
          new SvcError(
            'internal',
            `could not obtain a certificate for ${domain} over ACME from ${this.#options.directoryUrl}: ${(error as Error).message}`,
            { cause: error },
          ),
        );
      })
      .finally(() => this.#ordering.delete(domain));
    this.#ordering.set(domain, order);
    return order;
  }

  async #ensure(domain: string): Promise<void> {
    if (await this.#lasts(domain)) return;
    const acme = await this.#acme();
    const client = await this.#account();
    // An ECDSA key, as the default certificate's usually is: Node serves the SNI context of another key type unreliably.
    const [key, csr] = await acme.crypto.createCsr({ altNames: [domain] }, await acme.crypto.createPrivateEcdsaKey());
    this.#options.log(`ACME: ordering a certificate for ${domain} from ${this.#options.directoryUrl}`);
    const pem = await client.auto({
      csr,
      ...(this.#options.email === null ? {} : { email: this.#options.email }),
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // The CA checks the challenge; svc fetching its own URL first would need the public DNS and port 80 from inside.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        this.#challenges.set(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        this.#challenges.delete(challenge.token);
      },
    });
    // The key first: the loader pairs the two files and waits for both.
    await writeAtomically(path.join(this.#options.certDir, `${domain}.key`), key, 0o600);
    await writeAtomically(path.join(this.#options.certDir, `${domain}.crt`), Buffer.from(pem), 0o644);
    // Marks the pair as svc's to renew; the loader skips hidden files.
    await writeFile(path.join(this.#options.certDir, `${MARKER}${domain}`), '');
    this.#options.log(`ACME: a certificate for ${domain} until ${new X509Certificate(pem).validTo}, written to ${this.#options.certDir}`);
  }

  /** Whether `<domain>.crt` holds a certificate for it with more than RENEW_BEFORE_MS left. */
  async #lasts(domain: string): Promise<boolean> {
    try {
      const certificate = new X509Certificate(await readFile(path.join(this.#options.certDir, `${domain}.crt`)));
      return certificate.checkHost(domain) !== undefined && Date.parse(certificate.validTo) - Date.now() > RENEW_BEFORE_MS;
    } catch {
      return false;
    }
  }

  async #renewAll(): Promise<void> {
    const files = await readdir(this.#options.certDir).catch(() => [] as string[]);
    for (const file of files.filter((name) => name.startsWith(MARKER))) await this.ensure(file.slice(MARKER.length));
  }

  #account(): Promise<acmeClient.Client> {
    this.#client ??= (async () => {
      const acme = await this.#acme();
      const accountKey = await readFile(this.#options.accountKeyFile).catch(async () => {
        const created = await acme.crypto.createPrivateKey();
        await writeAtomically(this.#options.accountKeyFile, created, 0o600);
        return created;
      });
      return new acme.Client({ directoryUrl: this.#options.directoryUrl, accountKey });
    })();
    return this.#client;
  }
}

async function writeAtomically(file: string, contents: Buffer, mode: number): Promise<void> {
  // A hidden name: the certificate folder's watcher ignores it until the rename.
  const staged = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  await writeFile(staged, contents, { mode });
  await rename(staged, file);
}

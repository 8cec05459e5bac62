/**
 * The settings of HTTPS: the gateway's certificate files, the plain-HTTP
 * listener beside it, and whether a proxy in front that terminates TLS is believed. Without them svc speaks plain HTTP as before. What the
 * files hold is checked when the platform starts (core/traffic/gateway/tls/), since a
 * platform can be started without this loader; here, the rules between keys.
 * docs/configuration.md and docs/domains.md#https describe them.
 */

export interface TlsConfig {
  /** The default certificate (PEM, leaf first, then its chain); null: no TLS. */
  readonly tlsCert: string | null;
  /** Its private key (PEM). */
  readonly tlsKey: string | null;
  /** A folder of `<name>.crt` + `<name>.key` pairs, each served for the host names its certificate holds (SNI). */
  readonly tlsCertDir: string | null;
  /** With TLS: a second, plain-HTTP listener on this port (0 picks a free one); null: none. */
  readonly httpPort: number | null;
  /** The plain listener answers 308 to the same URL over HTTPS (except ACME's HTTP-01 challenges). */
  readonly httpsRedirect: boolean;
  /**
   * svc is reached only through a proxy in front (which terminates TLS): believe its
   * X-Forwarded-Proto and X-Forwarded-For. Off, a client's own are replaced.
   */
  readonly trustProxy: boolean;
  /**
   * An ACME directory (`https://acme-v02.api.letsencrypt.org/directory`): svc obtains a
   * certificate for each custom domain once it is verified, answering HTTP-01 on `httpPort`,
   * and writes it into `tlsCertDir`. Null: certificates come from files only.
   */
  readonly acmeDirectory: string | null;
  /** The contact of the ACME account (the CA's expiry warnings go there). */
  readonly acmeEmail: string | null;
  /** A PEM file of the CA that signed the ACME server's own certificate, when it is not one the machine trusts (a test CA). */
  readonly acmeCa: string | null;
}

export function tlsDefaults(): TlsConfig {
  return {
    tlsCert: null,
    tlsKey: null,
    tlsCertDir: null,
    httpPort: null,
    httpsRedirect: false,
    trustProxy: false,
    acmeDirectory: null,
    acmeEmail: null,
    acmeCa: null,
  };
}

export const tlsKeys = {
  tlsCert: { env: 'SVC_TLS_CERT', kind: 'existingFile', what: 'a PEM certificate file' },
  tlsKey: { env: 'SVC_TLS_KEY', kind: 'existingFile', what: 'a PEM private key file' },
  tlsCertDir: { env: 'SVC_TLS_CERT_DIR', kind: 'existingFolder', what: 'a folder of <name>.crt and <name>.key files' },
  httpPort: { env: 'SVC_HTTP_PORT', kind: 'optionalPort' },
  httpsRedirect: { env: 'SVC_HTTPS_REDIRECT', kind: 'boolean' },
  trustProxy: { env: 'SVC_TRUST_PROXY', kind: 'boolean' },
  acmeDirectory: { env: 'SVC_ACME_DIRECTORY', kind: 'url' },
  acmeEmail: { env: 'SVC_ACME_EMAIL', kind: 'string' },
  acmeCa: { env: 'SVC_ACME_CA', kind: 'existingFile', what: 'a PEM CA certificate file' },
} as const;

/** Whether the gateway serves HTTPS. */
export function tlsEnabled(config: Pick<TlsConfig, 'tlsCert'>): boolean {
  return config.tlsCert !== null;
}

/** Rules between the keys, after every key was read; the problems (empty when they fit together). */
export function checkTls(config: TlsConfig & { readonly port: number }): string[] {
  const problems: string[] = [];
  if ((config.tlsCert === null) !== (config.tlsKey === null)) {
    problems.push('tlsCert (SVC_TLS_CERT) and tlsKey (SVC_TLS_KEY) go together: the default certificate and its private key');
  }
  const tls = config.tlsCert !== null && config.tlsKey !== null;
  if (config.tlsCertDir !== null && !tls) {
    problems.push(
      'tlsCertDir (SVC_TLS_CERT_DIR) needs tlsCert and tlsKey: the default certificate answers clients that name no host, or one no file covers',
    );
  }
  if (config.httpPort !== null && !tls) {
    problems.push(
      'httpPort (SVC_HTTP_PORT) is the plain-HTTP listener beside HTTPS: it needs tlsCert and tlsKey (without them, port already serves plain HTTP)',
    );
  }
  if (config.httpPort !== null && config.httpPort !== 0 && config.httpPort === config.port) {
    problems.push(`httpPort and port are both ${config.port}: HTTPS and plain HTTP need a port each`);
  }
  if (config.acmeDirectory !== null && (config.tlsCertDir === null || config.httpPort === null)) {
    problems.push(
      'acmeDirectory (SVC_ACME_DIRECTORY) needs tlsCertDir (where svc writes the certificates it obtains) and httpPort (the plain-HTTP port, 80 in the open, where the CA fetches its HTTP-01 challenges)',
    );
  }
  if (config.acmeDirectory === null && (config.acmeEmail !== null || config.acmeCa !== null)) {
    problems.push(
      'acmeEmail (SVC_ACME_EMAIL) and acmeCa (SVC_ACME_CA) belong to acmeDirectory (SVC_ACME_DIRECTORY): set the ACME directory too, or leave them out',
    );
  }
  // A contact the CA would refuse only at the first order, long after the start: said now.
  if (config.acmeEmail !== null && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(config.acmeEmail)) {
    problems.push(`acmeEmail (SVC_ACME_EMAIL) must be an email address such as ops@example.com, not ${JSON.stringify(config.acmeEmail)}`);
  }
  if (config.httpsRedirect && config.httpPort === null) {
    problems.push(
      'httpsRedirect (SVC_HTTPS_REDIRECT) needs httpPort (SVC_HTTP_PORT): the plain-HTTP port whose requests it sends to HTTPS, such as 80',
    );
  }
  return problems;
}

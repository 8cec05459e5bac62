/**
 * One certificate as files: a PEM certificate chain and its private key, read
 * and checked with Node's crypto (they parse, the key is the certificate's)
 * into a TLS context, with the host names the certificate covers.
 */
import { readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import tls from 'node:tls';

export interface CertificateFiles {
  readonly cert: string;
  readonly key: string;
}

export interface LoadedCertificate {
  readonly files: CertificateFiles;
  /** What the server hands `tls.createSecureContext` (and `setSecureContext` for the default). */
  readonly options: { readonly cert: Buffer; readonly key: Buffer };
  readonly context: tls.SecureContext;
  /** The DNS names of its subjectAltName (lower case, `*.` wildcards kept), else its CN. */
  readonly names: readonly string[];
  readonly validTo: string;
}

/** What is wrong with a certificate's files, naming the file; the message of an `Error` thrown by `loadCertificate`. */
export class CertificateFileError extends Error {}

/** Reads and checks one pair; throws `CertificateFileError` naming the file and the problem. */
export function loadCertificate(files: CertificateFiles): LoadedCertificate {
  const cert = readPem(files.cert, 'certificate');
  const key = readPem(files.key, 'private key');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    throw new CertificateFileError(`${files.cert} is not a PEM certificate (${(error as Error).message})`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new CertificateFileError(`${files.key} is not a PEM private key, or it is encrypted (${(error as Error).message})`);
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new CertificateFileError(`${files.key} is not the private key of the certificate in ${files.cert}`);
  let context: tls.SecureContext;
  try {
    context = tls.createSecureContext({ cert, key });
  } catch (error) {
    throw new CertificateFileError(`${files.cert} with ${files.key} cannot serve TLS (${(error as Error).message})`);
  }
  return { files, options: { cert, key }, context, names: namesOf(x509), validTo: x509.validTo };
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CertificateFileError(
      `cannot read the ${what} ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

/** The names a certificate is valid for, as clients check them: its DNS subjectAltNames, else its CN. */
function namesOf(x509: X509Certificate): string[] {
  const dns = (x509.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  if (dns.length > 0) return dns;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(x509.subject)?.[1];
  return cn === undefined ? [] : [cn.toLowerCase()];
}

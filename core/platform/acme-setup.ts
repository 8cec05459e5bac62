/**
 * Wires ACME into a server (`acmeDirectory`): the client itself (acme.ts),
 * and the custom-domain directory the API verifies through, so that a domain
 * that becomes verified gets its certificate ordered right away.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ServerConfig } from '../../config/schema.js';
import type { DomainDirectory } from '../model/domains/types.js';
import { AcmeCertificates } from '../traffic/gateway/tls/acme.js';

export function acmeFor(config: ServerConfig, log: (text: string) => void, report: (error: unknown) => void): AcmeCertificates | null {
  if (config.acmeDirectory === null || config.tlsCertDir === null) return null;
  return new AcmeCertificates({
    directoryUrl: config.acmeDirectory,
    email: config.acmeEmail,
    ca: config.acmeCa === null ? null : readFileSync(config.acmeCa),
    certDir: config.tlsCertDir,
    accountKeyFile: path.join(config.dataDir, 'acme-account.key'),
    log,
    report,
  });
}

/** The directory with a verification that orders the domain's certificate once it is verified (in the background). */
export function orderingOnVerify(directory: DomainDirectory, acme: AcmeCertificates): DomainDirectory {
  return {
    list: (workspace) => directory.list(workspace),
    async verify(workspace, domain) {
      const view = await directory.verify(workspace, domain);
      if (view.status === 'verified') void acme.ensure(view.domain);
      return view;
    },
  };
}

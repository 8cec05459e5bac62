/**
 * A registry's answers turned into svc's error model: the status, the
 * distribution spec's error code and message kept, and a hint for what an
 * operator changes.
 */
import { SvcError } from '../../../model/errors.js';

export interface RegistryErrorEntry {
  readonly code: string;
  readonly message: string;
}

/** The spec's `{"errors": [{code, message, detail}]}`, or the body's first line for anything else (a proxy's page). */
export function registryErrors(body: string): RegistryErrorEntry[] {
  try {
    const value = JSON.parse(body) as { errors?: unknown };
    if (Array.isArray(value.errors)) {
      return value.errors.map((entry: { code?: unknown; message?: unknown }) => ({
        code: String(entry?.code ?? 'UNKNOWN'),
        message: String(entry?.message ?? ''),
      }));
    }
  } catch {
    // Not JSON: quoted below.
  }
  const line = body.trim().split('\n')[0] ?? '';
  return line === '' ? [] : [{ code: 'UNKNOWN', message: line.slice(0, 200) }];
}

export function registryRefused(host: string, what: string, status: number, body: string): SvcError {
  const errors = registryErrors(body);
  const said = errors.length === 0 ? '' : `: ${errors.map((e) => `${e.code} ${e.message}`.trim()).join('; ')}`;
  return new SvcError('image_build_failed', `the registry ${host} refused ${what} (HTTP ${status}${said})`, {
    hint: hintFor(status),
    details: { registry: host, status, errors },
  });
}

export function registryUnreachable(host: string, what: string, error: unknown): SvcError {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new SvcError('image_build_failed', `cannot reach the registry ${host} to ${what} (${code})`, {
    hint: 'Check imageRegistry / imageBase (SVC_IMAGE_REGISTRY, SVC_IMAGE_BASE) and that svc reaches that host; a registry without TLS needs http:// in imageRegistry.',
    details: { registry: host },
    cause: error,
  });
}

function hintFor(status: number): string {
  if (status === 401 || status === 403) {
    return 'Give svc an account that may push to the registry: SVC_IMAGE_REGISTRY_USERNAME and SVC_IMAGE_REGISTRY_PASSWORD (a base image on another registry is pulled anonymously).';
  }
  if (status === 404) return 'Check the base image name and tag (imageBase, SVC_IMAGE_BASE) and the repository prefix of imageRegistry.';
  return "The registry's own message is quoted above; check its logs.";
}

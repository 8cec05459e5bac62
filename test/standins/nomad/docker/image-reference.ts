/** Image references `[host[:port]/]repo[:tag][@sha256:…]` as distribution/reference parses them. */

export interface ImageReference {
  /** Registry host with port; `docker.io` when the first path part is not a host. */
  readonly host: string;
  readonly repository: string;
  readonly tag: string;
  readonly digest: string | null;
}

export function parseImageReference(image: string): ImageReference {
  let rest = image;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^sha256:[a-f0-9]{64}$/.test(digest)) throw new Error(`invalid reference format: ${image}`);
  }
  let tag = 'latest';
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const first = rest.split('/')[0]!;
  // The first part is a registry host when it has a dot or a port, or is localhost (reference.splitDockerDomain).
  const hasHost = rest.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = hasHost ? first : 'docker.io';
  let repository = hasHost ? rest.slice(first.length + 1) : rest;
  if (host === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  if (
    !repository ||
    !/^[a-z0-9]+(?:[._-][a-z0-9]+|__)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(repository) ||
    !/^[\w][\w.-]{0,127}$/.test(tag)
  ) {
    throw new Error(`invalid reference format: ${image}`);
  }
  return { host, repository, tag, digest };
}

/** Docker treats loopback registries as insecure (plain HTTP); everything else is HTTPS. */
export function registryBaseUrl(ref: ImageReference): string {
  const hostname = ref.host.replace(/:\d+$/, '');
  const scheme = hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]' ? 'http' : 'https';
  const host = ref.host === 'docker.io' ? 'registry-1.docker.io' : ref.host;
  return `${scheme}://${host}/v2/${ref.repository}`;
}

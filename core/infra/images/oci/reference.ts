/**
 * Image references (`python:3.11-slim`, `registry.example.com:5000/svc/img-…@sha256:…`)
 * and the registry svc pushes to (`imageRegistry`), parsed the way Docker
 * reads them: the first path component is a registry host when it has a dot
 * or a port or is `localhost`; otherwise the image is on Docker Hub, whose
 * one-component names live under `library/`.
 */
import { SvcError } from '../../../model/errors.js';

export interface ImageReference {
  /** Host[:port] as written in references (`docker.io` for Docker Hub). */
  readonly host: string;
  /** Where the registry's HTTP API answers: `https://registry-1.docker.io`, `http://127.0.0.1:5000`. */
  readonly origin: string;
  readonly repository: string;
  readonly tag: string | null;
  readonly digest: string | null;
}

export interface RegistryTarget {
  readonly host: string;
  readonly origin: string;
  /** Repository prefix the images go under (`svc` in `host/svc/img-…`), '' for none. */
  readonly prefix: string;
}

const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_API = 'https://registry-1.docker.io';
const DOCKER_HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);
/** The distribution spec's repository name grammar. */
const COMPONENT = '[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*';
const REPOSITORY = new RegExp(`^${COMPONENT}(?:/${COMPONENT})*$`);
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const HOST = /^(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?$/;

/** host[:port] with a port from 1 to 65535, if any. */
function isHost(text: string): boolean {
  const match = HOST.exec(text);
  return match !== null && (match[1] === undefined || (Number(match[1]) >= 1 && Number(match[1]) <= 65535));
}

export function parseImageReference(text: string): ImageReference {
  const bad = (why: string) =>
    new SvcError('config_invalid', `${JSON.stringify(text)} is not an image reference: ${why}`, {
      hint: 'Write it as Docker does: [registry-host[:port]/]repository[:tag][@sha256:<digest>], e.g. python:3.11-slim or registry.example.com/base/python:3.11.',
    });
  let rest = text.trim();
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad(`the digest ${JSON.stringify(digest)} is not sha256:<64 lowercase hex digits>`);
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`the tag ${JSON.stringify(tag)} is not a valid tag (letters, digits, _ . -, at most 128)`);
  }
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const namesHost = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  // Docker Hub's other names are Docker Hub too (its API answers at one host).
  const host = !namesHost ? DOCKER_HUB : DOCKER_HUB_ALIASES.has(first.toLowerCase()) ? DOCKER_HUB : first;
  let repository = namesHost ? rest.slice(slash + 1) : rest;
  if (namesHost && !isHost(host)) throw bad(`${JSON.stringify(host)} is not a registry host[:port]`);
  if (host === DOCKER_HUB && !repository.includes('/')) repository = `library/${repository}`;
  if (!REPOSITORY.test(repository))
    throw bad(`the repository ${JSON.stringify(repository)} must be lowercase letters and digits separated by . _ __ - or /`);
  if (tag === null && digest === null) tag = 'latest';
  return { host, origin: registryOrigin(host, null), repository, tag, digest };
}

/** `[http(s)://]host[:port][/prefix]` → where svc pushes. No scheme: https, but http for loopback hosts (as Docker allows). */
export function parseRegistryTarget(text: string): RegistryTarget | { problem: string } {
  const match = /^(?:(https?):\/\/)?([^/\s]+)((?:\/[^/\s]+)*)\/*$/.exec(text.trim());
  const example = 'such as registry.example.com:5000/svc, or http://10.0.0.5:5000 for a registry without TLS';
  if (!match)
    return { problem: `expected a registry host[:port] with an optional repository prefix, ${example}; got ${JSON.stringify(text)}` };
  const [, scheme, host, path] = match as unknown as [string, string | undefined, string, string];
  if (!isHost(host)) return { problem: `${JSON.stringify(host)} is not a registry host[:port] (${example})` };
  const prefix = path.replace(/^\//, '');
  if (prefix !== '' && !REPOSITORY.test(prefix)) {
    return {
      problem: `the repository prefix ${JSON.stringify(prefix)} must be lowercase letters and digits separated by . _ __ - or / (${example})`,
    };
  }
  if (host === DOCKER_HUB && scheme === 'http') return { problem: 'Docker Hub answers over https only' };
  return { host, origin: registryOrigin(host, scheme ?? null), prefix };
}

/** The name an image has in a job: `host/repository@sha256:…` pins exactly what was pushed. */
export function pinnedReference(target: { host: string }, repository: string, digest: string): string {
  return `${target.host}/${repository}@${digest}`;
}

function registryOrigin(host: string, scheme: string | null): string {
  if (host === DOCKER_HUB) return DOCKER_HUB_API;
  return `${scheme ?? (isLoopback(host) ? 'http' : 'https')}://${host}`;
}

function isLoopback(host: string): boolean {
  const name = host.replace(/:\d+$/, '');
  return name === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(name) || name === '[::1]';
}

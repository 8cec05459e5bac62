/** Which bodies are JSON: the normalizer (core/services/app-api/normalize.ts) and the client exporters must agree. */

/** `application/json`, or a `+json` type such as `application/problem+json`, with or without parameters. */
export function isJsonMediaType(type: string): boolean {
  return /^application\/(?:[\w.+-]+\+)?json(?:;|$)/i.test(type);
}

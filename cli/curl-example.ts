/**
 * Ready-to-paste curl lines for a deployed workload, with example arguments
 * taken from its parameter schema (defaults when it has them).
 */
import type { DeployedWorkload } from '../core/services/deployments/types.js';
import type { JsonSchema } from '../core/model/workload/manifest/types.js';
import { shellQuote } from './shell-quote.js';

export interface CurlOptions {
  /** Shell expression that yields the token, e.g. $(cat ~/.svc/data/owner-token). */
  readonly tokenExpression: string;
}

export function curlExample(workload: DeployedWorkload, options: CurlOptions): string | null {
  if (!workload.url || workload.kind === 'realtime') return null;
  if (workload.kind === 'asgi') {
    // An ASGI app defines its own routes; its root is the one every app has.
    return `curl${workload.authorized ? ` -H "Authorization: Bearer ${options.tokenExpression}"` : ''} ${shellQuote(`${workload.url}/`)}`;
  }
  const args = exampleArguments(workload.parameters);
  const method = workload.methods.includes('POST') || workload.methods.length === 0 ? 'POST' : (workload.methods[0] ?? 'GET');
  const auth = workload.authorized ? ` -H "Authorization: Bearer ${options.tokenExpression}"` : '';
  if (method === 'GET' || method === 'HEAD' || method === 'DELETE') {
    const query = new URLSearchParams(
      Object.entries(args).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ).toString();
    const url = query ? `${workload.url}?${query}` : workload.url;
    return `curl${method === 'GET' ? '' : ` -X ${method}`}${auth} ${shellQuote(url)}`;
  }
  return `curl -X ${method}${auth} -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(args))} ${shellQuote(workload.url)}`;
}

/** One example value per parameter: its default, else a placeholder of its type. */
export function exampleArguments(schema: JsonSchema | null): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, JsonSchema> } | null)?.properties ?? {};
  const args: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) args[name] = exampleValue(property);
  return args;
}

function exampleValue(schema: JsonSchema): unknown {
  const s = schema as { default?: unknown; type?: unknown; enum?: unknown[]; anyOf?: JsonSchema[] };
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (Array.isArray(s.anyOf) && s.anyOf[0]) return exampleValue(s.anyOf[0]);
  switch (s.type) {
    case 'string':
      return 'example';
    case 'integer':
      return 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return null;
  }
}

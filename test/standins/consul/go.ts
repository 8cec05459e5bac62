/**
 * Go semantics the Consul stand-in needs: time.ParseDuration, the way a
 * time.Duration prints, strconv.ParseBool/ParseUint and Consul's strict JSON
 * decoding (lib.DecodeJSON with DisallowUnknownFields, keys matched
 * case-insensitively like encoding/json).
 */

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `time.ParseDuration` in milliseconds; throws Go's message on bad input. */
export function parseGoDuration(text: string): number {
  const bad = (): Error => new Error(`time: invalid duration ${JSON.stringify(text)}`);
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw bad();
  let total = 0;
  while (rest !== '') {
    const match = /^(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)?/.exec(rest);
    if (!match || match[1] === '' || match[1] === '.') throw bad();
    if (match[2] === undefined) throw new Error(`time: missing unit in duration ${JSON.stringify(text)}`);
    total += Number(match[1]) * UNITS[match[2]]!;
    rest = rest.slice(match[0].length);
  }
  return sign * total;
}

/** How Go prints a time.Duration (`10s`, `1m30s`, `500ms`, `0s`). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1) return `${Math.round(ms * 1000)}µs`;
  if (ms < 1000) return `${trim(ms)}ms`;
  let seconds = ms / 1000;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  let out = '';
  if (hours > 0) out += `${hours}h`;
  if (hours > 0 || minutes > 0) out += `${minutes}m`;
  return `${out}${trim(seconds)}s`;
}

function trim(n: number): string {
  return String(Number(n.toFixed(9)));
}

/** A JSON duration field: a Go duration string or a number of nanoseconds; returns ms. */
export function durationField(value: unknown, field: string): number {
  if (typeof value === 'number') return value / 1e6;
  if (typeof value === 'string') return parseGoDuration(value);
  throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${field} of type time.Duration`);
}

/** `strconv.ParseBool`. */
export function parseGoBool(text: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  throw new Error(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
}

/** `strconv.ParseUint(text, 10, 64)`. */
export function parseGoUint(text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(text)}: value out of range`);
  return value;
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}

/**
 * Strict decoding: `known` lists the struct's field names (plus accepted
 * aliases mapped to a field name). Keys match case-insensitively; an unknown
 * key throws `json: unknown field "X"`, or is skipped with `ignoreUnknown`
 * (Go's plain decoding). Returns the fields under their canonical names.
 */
export function strictFields(
  raw: unknown,
  known: readonly string[],
  aliases: Record<string, string> = {},
  struct = 'object',
  ignoreUnknown = false,
): Record<string, unknown> {
  if (raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`json: cannot unmarshal ${jsonType(raw)} into Go value of type ${struct}`);
  const byLower = new Map<string, string>();
  for (const name of known) byLower.set(name.toLowerCase(), name);
  for (const [alias, name] of Object.entries(aliases)) byLower.set(alias.toLowerCase(), name);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const name = byLower.get(key.toLowerCase());
    if (name === undefined) {
      if (ignoreUnknown) continue;
      throw new Error(`json: unknown field ${JSON.stringify(key)}`);
    }
    out[name] = value;
  }
  return out;
}

export function stringField(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${field} of type string`);
  return value;
}

export function intField(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${field} of type int`);
  return value;
}

export function stringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${field} of type []string`);
  return value as string[];
}

export function stringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new Error(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${field} of type map[string]string`);
  }
  return { ...(value as Record<string, string>) };
}

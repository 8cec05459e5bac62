/**
 * Decodes a request body the way Nomad's HTTP agent does: `json.NewDecoder(body).Decode(&out)`
 * into the `api` package's structs (hashicorp/nomad command/agent/http.go `decodeBody`).
 *
 * - keys match struct fields case-insensitively (exact match preferred), output uses the Go name;
 * - `null` leaves a field unset;
 * - a wrong type is an error with Go's text
 *   (`json: cannot unmarshal string into Go struct field RestartPolicy.Job.TaskGroups.RestartPolicy.Delay of type time.Duration`);
 * - unknown keys are ignored like the real server does, unless `strict` is set: then the first one is
 *   reported as `json: unknown field "X"` (Go's text for a decoder with DisallowUnknownFields).
 */

export type GoType =
  | { readonly k: 'string' }
  | { readonly k: 'bool' }
  | { readonly k: 'int'; readonly name: string; readonly min: number; readonly max: number }
  | { readonly k: 'duration' }
  | { readonly k: 'bytes' }
  | { readonly k: 'any' }
  | { readonly k: 'slice'; readonly of: GoType }
  | { readonly k: 'map'; readonly of: GoType }
  | { readonly k: 'struct'; readonly name: string; readonly fields: () => Readonly<Record<string, GoType>> };

export class GoDecodeError extends Error {}

interface Context {
  readonly strict: boolean;
  firstError: string | null;
}

/** Parses and decodes `text` into `type`; throws GoDecodeError with the message Nomad would answer (HTTP 400). */
export function decodeGoJson(text: string, type: GoType, strict: boolean): Record<string, unknown> {
  if (text.length === 0) throw new GoDecodeError('Request body is empty');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new GoDecodeError(syntaxErrorText(text, error as Error));
  }
  const context: Context = { strict, firstError: null };
  const out = decodeValue(raw, type, context, '', []);
  if (context.firstError) throw new GoDecodeError(context.firstError);
  return (out ?? {}) as Record<string, unknown>;
}

function syntaxErrorText(text: string, error: Error): string {
  const match = /position (\d+)/.exec(error.message);
  if (!match) return 'unexpected EOF';
  const position = Number(match[1]);
  const char = text[position];
  if (char === undefined) return 'unexpected EOF';
  return `invalid character '${char}' looking for beginning of value`;
}

function typeName(type: GoType): string {
  switch (type.k) {
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'int':
      return type.name;
    case 'duration':
      return 'time.Duration';
    case 'bytes':
      return '[]uint8';
    case 'any':
      return 'interface {}';
    case 'slice':
      return `[]${typeName(type.of)}`;
    case 'map':
      return `map[string]${typeName(type.of)}`;
    case 'struct':
      return `api.${type.name}`;
  }
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}

function fail(context: Context, value: string, type: GoType, structName: string, path: readonly string[]): undefined {
  if (context.firstError) return undefined;
  const target = structName || path.length > 0 ? `Go struct field ${structName}.${path.join('.')}` : 'Go value';
  context.firstError = `json: cannot unmarshal ${value} into ${target} of type ${typeName(type)}`;
  return undefined;
}

function decodeValue(value: unknown, type: GoType, context: Context, structName: string, path: readonly string[]): unknown {
  if (value === null) return undefined;
  switch (type.k) {
    case 'any':
      return value;
    case 'string':
      return typeof value === 'string' ? value : fail(context, jsonKind(value), type, structName, path);
    case 'bytes':
      return typeof value === 'string' ? value : fail(context, jsonKind(value), type, structName, path);
    case 'bool':
      return typeof value === 'boolean' ? value : fail(context, jsonKind(value), type, structName, path);
    case 'int':
    case 'duration': {
      if (typeof value !== 'number') return fail(context, jsonKind(value), type, structName, path);
      const min = type.k === 'int' ? type.min : Number.MIN_SAFE_INTEGER;
      const max = type.k === 'int' ? type.max : Number.MAX_SAFE_INTEGER;
      if (!Number.isInteger(value) || value < min || value > max) return fail(context, `number ${value}`, type, structName, path);
      return value;
    }
    case 'slice': {
      if (!Array.isArray(value)) return fail(context, jsonKind(value), type, structName, path);
      return value.map((item) => decodeValue(item, type.of, context, structName, path) ?? null);
    }
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) return fail(context, jsonKind(value), type, structName, path);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        const decoded = decodeValue(item, type.of, context, structName, path);
        if (decoded !== undefined) out[key] = decoded;
      }
      return out;
    }
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value)) return fail(context, jsonKind(value), type, structName, path);
      const fields = type.fields();
      const names = Object.keys(fields);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        const name = key in fields ? key : names.find((candidate) => candidate.toLowerCase() === key.toLowerCase());
        if (name === undefined) {
          if (context.strict && !context.firstError) context.firstError = `json: unknown field "${key}"`;
          continue;
        }
        const decoded = decodeValue(item, fields[name]!, context, type.name, [...path, name]);
        if (decoded !== undefined) out[name] = decoded;
        else delete out[name];
      }
      return out;
    }
  }
}

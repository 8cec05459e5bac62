/**
 * How a stand-in's answer is held against the real agent's recorded one:
 * the same status; for an error, the same text (IDs, numbers and the node's
 * name masked); the headers svc reads present in the same form; and a JSON
 * body of the same shape — at each level svc reads (`levels`, every level
 * when none are given) the same keys, and every value there of the same
 * JSON type. Values themselves (IDs, indexes, times, states) may differ.
 */
import type { Payload } from '../../cluster/recorder.js';
import type { Answer } from './ids.js';

export interface Expectation {
  /** The levels of the body svc reads: `''` the top, `[]` an element, `.Key` a field, `*` any key. Absent: all of it. */
  readonly levels?: readonly string[];
  /** Levels whose value may be null on one side and not on the other, because the stand-in cannot reach the state the agent was in. */
  readonly stateful?: readonly string[];
  /** Fields Go leaves out when empty (`omitempty`) whose emptiness is that state: either side may lack them. */
  readonly optional?: readonly string[];
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** The cluster harness names its Consul node `svc-test-<pid>` (test/cluster/agents.ts); the stand-in's node is `standin`. */
const NODE = /svc-test-\d+|standin/g;

export function masked(text: string): string {
  return text.replace(UUID, '<id>').replace(NODE, '<node>').replace(/\d+/g, '<n>');
}

export function differences(recorded: Answer, replayed: Answer, expect: Expectation = {}): string[] {
  const out: string[] = [];
  if (recorded.status !== replayed.status) out.push(`status ${replayed.status}, the agent's ${recorded.status}`);
  for (const name of new Set([...Object.keys(recorded.headers), ...Object.keys(replayed.headers)])) {
    const real = recorded.headers[name];
    const mine = replayed.headers[name];
    if (real === undefined || mine === undefined)
      out.push(`header ${name} ${real === undefined ? `sent (${mine}), the agent sends none` : `missing (the agent's: ${real})`}`);
    else if (!sameForm(name, real, mine)) out.push(`header ${name}: ${JSON.stringify(mine)}, the agent's ${JSON.stringify(real)}`);
  }
  const ok = recorded.status >= 200 && recorded.status < 300;
  const real = kindOf(recorded.body);
  const mine = kindOf(replayed.body);
  if (!ok || real === 'text') {
    // An error's text is what svc quotes; a plain-text answer (logs) differs in content only.
    if (!ok && masked(textOf(recorded.body)) !== masked(textOf(replayed.body)))
      out.push(`text ${JSON.stringify(textOf(replayed.body))}, the agent's ${JSON.stringify(textOf(recorded.body))}`);
    if (real !== mine && !(ok && real === 'text' && mine === 'none')) out.push(`body ${mine}, the agent's ${real}`);
    return out;
  }
  if (real !== mine) out.push(`body ${mine}, the agent's ${real}`);
  else if (real === 'json') shape('', (recorded.body as { json: unknown }).json, (replayed.body as { json: unknown }).json, expect, out);
  return out;
}

function sameForm(name: string, real: string, mine: string): boolean {
  if (name.endsWith('-Index')) return /^\d+$/.test(mine) && (Number(real) === 0 || Number(mine) > 0);
  if (name.endsWith('-LastContact')) return /^\d+$/.test(mine);
  return real === mine;
}

function kindOf(body: Payload | undefined): 'none' | 'json' | 'text' | 'bytes' {
  if (body === undefined) return 'none';
  return 'json' in body ? 'json' : 'text' in body ? 'text' : 'bytes';
}

function textOf(body: Payload | undefined): string {
  if (body === undefined) return '';
  return 'text' in body ? body.text : 'json' in body ? JSON.stringify(body.json) : body.base64;
}

function typeOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** `[].TaskStates.*` → `[]`, `TaskStates`, `*`. */
function tokens(path: string): string[] {
  return path.match(/\[\]|[^.[\]]+/g) ?? [];
}

function fits(pattern: readonly string[], at: readonly string[]): boolean {
  return at.every((token, i) => pattern[i] === token || (pattern[i] === '*' && token !== '[]'));
}

function matchesAny(patterns: readonly string[] | undefined, at: string): boolean {
  const here = tokens(at);
  return (patterns ?? []).map(tokens).some((p) => p.length === here.length && fits(p, here));
}

/** Whether `at` is a level svc reads (its keys compared), or lies on the way to one. */
function role(levels: readonly string[] | undefined, at: string): 'read' | 'through' | 'beyond' {
  if (levels === undefined) return 'read';
  const here = tokens(at);
  const patterns = levels.map(tokens);
  if (patterns.some((p) => p.length === here.length && fits(p, here))) return 'read';
  return patterns.some((p) => p.length > here.length && fits(p, here)) ? 'through' : 'beyond';
}

/** Compares `mine` with `real` at `at`; `typed`: the level above is read, so this value's JSON type counts. */
function shape(at: string, real: unknown, mine: unknown, expect: Expectation, out: string[], typed = true): void {
  const here = role(expect.levels, at);
  if (here === 'beyond' && !typed) return;
  const [a, b] = [typeOf(real), typeOf(mine)];
  if (a !== b) {
    if (!((a === 'null' || b === 'null') && matchesAny(expect.stateful, at))) out.push(`${at || 'body'}: ${b}, the agent's ${a}`);
    return;
  }
  if (here === 'beyond') return;
  if (Array.isArray(real) && Array.isArray(mine)) {
    real.forEach((item, i) => {
      if (i < mine.length) shape(`${at}[]`, item, mine[i], expect, out, here === 'read');
    });
    return;
  }
  if (a !== 'object') return;
  const r = real as Record<string, unknown>;
  const m = mine as Record<string, unknown>;
  if (here === 'read') {
    const optional = (key: string) => matchesAny(expect.optional, at === '' ? key : `${at}.${key}`);
    const missing = Object.keys(r).filter((k) => !(k in m) && !optional(k));
    const extra = Object.keys(m).filter((k) => !(k in r) && !optional(k));
    if (missing.length > 0) out.push(`${at || 'body'}: no ${missing.join(', ')}`);
    if (extra.length > 0) out.push(`${at || 'body'}: ${extra.join(', ')}, which the agent does not send`);
  }
  for (const key of Object.keys(r)) if (key in m) shape(at === '' ? key : `${at}.${key}`, r[key], m[key], expect, out, here === 'read');
}

/**
 * How state keys are written into Consul KV. Consul releases since 1.21.5
 * validate KV keys (hashicorp/consul agent/kvs_endpoint.go `validateKVKey`:
 * only `a-zA-Z0-9,-_./`, no `../`, no key ending in a "file extension" such
 * as `.json`; the exact rule has changed between patch releases), while our
 * keys may hold spaces, dots and any Unicode. So every key is escaped into
 * the alphabet every release accepts: `A-Z a-z 0-9 _ - /` stay, every other
 * UTF-8 byte becomes `,` + two upper-case hex digits (`.` → `,2E`, `é` →
 * `,C3,A9`). Each byte maps to a fixed token, so a string prefix stays a
 * prefix (`list`, `watch` and `deleteTree` keep their meaning) and escaping
 * is reversible. Consul sorts the escaped keys; the store sorts them again by
 * our rule (UTF-8 bytes of the real key).
 */
const PLAIN = /[A-Za-z0-9_\-/]/;

export function escapeKey(key: string): string {
  let out = '';
  for (const char of key) {
    if (PLAIN.test(char)) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `,${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function unescapeKey(escaped: string): string {
  if (!escaped.includes(',')) return escaped;
  const bytes: number[] = [];
  for (let i = 0; i < escaped.length; i++) {
    const char = escaped[i]!;
    if (char === ',') {
      bytes.push(Number.parseInt(escaped.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(char.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

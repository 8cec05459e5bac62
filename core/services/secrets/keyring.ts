/**
 * The keys that seal secret values: AES-256-GCM through Node's crypto, a
 * fresh random 96-bit nonce per value, and additional authenticated data
 * that binds a ciphertext to where it belongs (workspace, secret, key), so
 * that one moved elsewhere in the store fails to open. The first key of the
 * ring seals; every key opens what names it: a sealed value carries its
 * key's id (`v1.<key id>.<nonce>.<ciphertext + tag>`, base64url), which is
 * how a rotation keeps old values readable until they are sealed again.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SvcError } from '../../model/errors.js';

export const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

/** A key's id: derived from the key itself, so that a key file holds nothing but keys. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('svc secrets key id\0').update(key).digest('hex').slice(0, 12);
}

export class Keyring {
  readonly #keys: ReadonlyMap<string, Buffer>;
  /** The id of the key that seals. */
  readonly currentId: string;

  /** `keys[0]` seals; all of them open. */
  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('Keyring: at least one key');
    for (const key of keys) if (key.length !== KEY_BYTES) throw new Error(`Keyring: a key is ${KEY_BYTES} bytes, got ${key.length}`);
    this.#keys = new Map(keys.map((key) => [keyIdOf(key), key]));
    this.currentId = keyIdOf(keys[0]!);
  }

  get ids(): readonly string[] {
    return [...this.#keys.keys()];
  }

  seal(plaintext: string, aad: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(this.currentId)!, nonce);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [FORMAT, this.currentId, nonce.toString('base64url'), body.toString('base64url')].join('.');
  }

  /** The id of the key that sealed `sealed` (to find values a rotation has not reached yet). */
  static keyIdOf(sealed: string): string | null {
    const parts = sealed.split('.');
    return parts.length === 4 && parts[0] === FORMAT ? parts[1]! : null;
  }

  /** The plaintext; `secrets_key_invalid` when the value is damaged, sealed for other data, or by a key this ring lacks. */
  open(sealed: string, aad: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== FORMAT) throw damaged('it is not a sealed value of this format');
    const [, id, nonceText, bodyText] = parts as [string, string, string, string];
    const key = this.#keys.get(id);
    if (key === undefined) {
      throw new SvcError(
        'secrets_key_invalid',
        `a secret value was sealed with key ${id}, which this server does not hold (it holds ${this.ids.join(', ')}).`,
        {
          hint: 'Give the server every key that sealed a value still stored: the new key first, the old ones after it (docs/secrets.md#rotating-the-key).',
        },
      );
    }
    const nonce = Buffer.from(nonceText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) throw damaged('its nonce or tag has the wrong length');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce);
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw damaged('it fails authentication: it was changed, or moved from another workspace, secret or key');
    }
  }
}

function damaged(why: string): SvcError {
  return new SvcError('secrets_key_invalid', `a stored secret value cannot be opened: ${why}.`, {
    hint: 'Set the secret again (svc secret set) to replace the damaged value.',
  });
}

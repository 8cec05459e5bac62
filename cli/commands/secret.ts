/**
 * `svc secret create | set | list | delete`: the workspace's secrets
 * (`/api/v1/secrets`). Values come from KEY=VALUE arguments or a dotenv file
 * (parsed by the `dotenv` package) and are never printed: answers and
 * listings show keys only. Values on the command line stay in the shell's
 * history; `--from-dotenv` keeps them out of it.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { SvcError } from '../../core/model/errors.js';
import type { SecretView } from '../../core/services/secrets/types.js';
import { API_PREFIX } from '../api-client.js';
import { confirm, needsConfirmation } from '../confirm.js';
import { connect, type CommandContext } from '../context.js';
import { formatTable } from '../table.js';
import { shortTime } from '../time.js';

export interface SecretValuesFlags {
  readonly 'from-dotenv'?: string;
  readonly json?: boolean;
}

export interface SecretCreateFlags extends SecretValuesFlags {
  readonly replace?: boolean;
}

export interface SecretSetFlags extends SecretValuesFlags {
  /** Keys to remove (the flag may be repeated). */
  readonly remove?: readonly string[];
  readonly restart?: boolean;
}

export interface SecretDeleteFlags {
  readonly yes?: boolean;
  readonly json?: boolean;
}

const secretPath = (name: string) => `${API_PREFIX}/secrets/${encodeURIComponent(name)}`;

export async function secretCreate(
  context: CommandContext,
  name: string,
  pairs: readonly string[],
  flags: SecretCreateFlags = {},
): Promise<void> {
  const values = await valuesOf(context, pairs, flags);
  if (Object.keys(values).length === 0) {
    throw new SvcError('usage_invalid', `svc secret create ${name} needs at least one KEY=VALUE (or --from-dotenv FILE).`);
  }
  const { client } = await connect(context);
  const secret = await client.post<SecretView>(`${API_PREFIX}/secrets`, { name, values, ...(flags.replace ? { replace: true } : {}) });
  if (flags.json) context.out.result(JSON.stringify(secret, null, 2));
  else
    context.out.done(
      `${flags.replace ? 'stored' : 'created'} the secret ${secret.name} with ${describeKeys(secret.keys)}; use it with secrets=[svc.Secret.from_name(${JSON.stringify(secret.name)})]`,
    );
}

export async function secretSet(
  context: CommandContext,
  name: string,
  pairs: readonly string[],
  flags: SecretSetFlags = {},
): Promise<void> {
  const values = await valuesOf(context, pairs, flags);
  const remove = [...(flags.remove ?? [])];
  if (Object.keys(values).length === 0 && remove.length === 0) {
    throw new SvcError('usage_invalid', `svc secret set ${name} needs KEY=VALUE pairs, --from-dotenv FILE or --remove KEY.`);
  }
  const { client } = await connect(context);
  const body = { values, ...(remove.length > 0 ? { remove } : {}), ...(flags.restart ? { restart: true } : {}) };
  const answer = await client.json<{ secret: SecretView; restarted: string[] }>('PATCH', secretPath(name), {
    json: body,
    long: flags.restart === true,
  });
  const { out } = context;
  if (flags.json) {
    out.result(JSON.stringify(answer, null, 2));
    return;
  }
  out.done(`updated the secret ${answer.secret.name}: ${describeKeys(answer.secret.keys)}`);
  if (flags.restart)
    out.step(
      answer.restarted.length === 0 ? 'no running workload uses it' : `restarted ${answer.restarted.join(', ')} with the new values`,
    );
  else out.step('running workloads get the new values at their next deploy (or now with --restart)');
}

export async function secretList(context: CommandContext, flags: { readonly json?: boolean } = {}): Promise<void> {
  const { client } = await connect(context);
  const { secrets } = await client.get<{ secrets: SecretView[] }>(`${API_PREFIX}/secrets`);
  const { out } = context;
  if (flags.json) {
    out.result(JSON.stringify({ secrets }, null, 2));
    return;
  }
  if (secrets.length === 0) {
    out.step('no secrets; create one with svc secret create NAME KEY=VALUE');
    return;
  }
  const rows = secrets.map((s) => [s.name, s.keys.join(', '), `${shortTime(s.updatedAt)}`, s.updatedBy ?? out.color.dim('-')]);
  for (const line of formatTable(['NAME', 'KEYS', 'UPDATED', 'BY'], rows, out.color)) out.result(line);
}

export async function secretDelete(context: CommandContext, name: string, flags: SecretDeleteFlags = {}): Promise<void> {
  const { out } = context;
  const ask = needsConfirmation(context, flags.yes, `svc secret delete ${name}`, 'deletes the secret');
  const { client } = await connect(context);
  if (ask)
    await confirm(
      context,
      `Delete the secret ${name}? Deploys that name it are refused until it exists again.`,
      `the secret ${name} was not deleted`,
    );
  await client.delete(secretPath(name));
  if (flags.json) out.result(JSON.stringify({ secret: name, deleted: true }));
  else out.done(`deleted the secret ${name}; running workloads keep the values they started with`);
}

/** The pairs of `--from-dotenv FILE`, then the KEY=VALUE arguments (which win). Errors name keys and arguments' positions, never values. */
async function valuesOf(context: CommandContext, pairs: readonly string[], flags: SecretValuesFlags): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  const file = flags['from-dotenv'];
  if (file !== undefined) {
    const where = path.resolve(context.cwd, String(file));
    let text: string;
    try {
      text = await readFile(where, 'utf8');
    } catch (error) {
      throw new SvcError(
        'usage_invalid',
        `--from-dotenv: cannot read ${where}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
      );
    }
    Object.assign(values, parseDotenv(text));
  }
  pairs.forEach((pair, index) => {
    const at = String(pair).indexOf('=');
    if (at <= 0) {
      throw new SvcError('usage_invalid', `argument ${index + 1} is not KEY=VALUE${at === 0 ? ' (the key is empty)' : ''}.`, {
        hint: 'Write each pair as KEY=VALUE, e.g. DATABASE_URL=postgres://…; quote values with spaces for your shell.',
      });
    }
    values[String(pair).slice(0, at)] = String(pair).slice(at + 1);
  });
  return values;
}

function describeKeys(keys: readonly string[]): string {
  return `${keys.length} key${keys.length === 1 ? '' : 's'} (${keys.join(', ')})`;
}

/** `svc secret reseal`: after a key rotation, every stored value sealed again under the server's first key (the operator only). */
export async function secretReseal(context: CommandContext, flags: { readonly json?: boolean } = {}): Promise<void> {
  const { client } = await connect(context);
  const done = await client.post<{ secrets: number; values: number }>(`${API_PREFIX}/secrets-key/reseal`, {}, { long: true });
  if (flags.json) context.out.result(JSON.stringify(done));
  else
    context.out.done(
      `sealed ${done.values} value${done.values === 1 ? '' : 's'} of ${done.secrets} secret${done.secrets === 1 ? '' : 's'} again under the server's first key; every server may now drop the old keys`,
    );
}

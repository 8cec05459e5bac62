/**
 * Destructive commands (`svc app delete`, `svc secret delete`) ask at the
 * terminal first, and without one need --yes: refused with
 * `confirmation_required` before anything is sent, or after a "no".
 */
import { SvcError } from '../core/model/errors.js';
import type { CommandContext } from './context.js';

/** `command` does `effect`; without --yes and without a terminal to ask on, it stops here. */
export function needsConfirmation(context: CommandContext, yes: boolean | undefined, command: string, effect: string): boolean {
  if (yes) return false;
  if (!context.interactive) {
    throw new SvcError('confirmation_required', `${command} ${effect}; without a terminal to ask on, it needs --yes.`, {
      hint: `Run \`${command} --yes\` if you mean it.`,
    });
  }
  return true;
}

/** Asks `question` (a `[y/N]` is added); anything but y or yes stops the command, saying `notDone`. */
export async function confirm(context: CommandContext, question: string, notDone: string): Promise<void> {
  const answer = await context.prompt(`${question} [y/N] `);
  if (!/^\s*y(es)?\s*$/i.test(answer))
    throw new SvcError('confirmation_required', `not confirmed: ${notDone}.`, { hint: 'Answer y to go ahead, or pass --yes.' });
}

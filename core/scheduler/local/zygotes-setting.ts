/** Reads SVC_ZYGOTES: whether local containers fork from a zygote of their image. */
import { SvcError } from '../../errors.js';

/** Unset, empty or `1`: on; `0`: off; anything else is `config_invalid` (a typo must not silently keep zygotes on). */
export function zygotesFromEnvironment(raw: string | undefined = process.env.SVC_ZYGOTES): boolean {
  const value = raw?.trim() ?? '';
  if (value === '' || value === '1') return true;
  if (value === '0') return false;
  throw new SvcError('config_invalid', `SVC_ZYGOTES must be 0 or 1, got ${JSON.stringify(raw)}`, {
    hint: 'Set SVC_ZYGOTES=0 to start every container as a new interpreter, or 1 (or unset it) to fork them from a zygote.',
  });
}

/** Reads SVC_ZYGOTES: whether local containers fork from a zygote of their image. */
import { envSwitch } from '../../config/env-switch.js';

/** Unset, empty or `1`: on; `0`: off; anything else is `config_invalid` (a typo must not silently keep zygotes on). */
export function zygotesFromEnvironment(raw: string | undefined = process.env.SVC_ZYGOTES): boolean {
  return envSwitch(
    { name: 'SVC_ZYGOTES', fallback: true, off: 'start every container as a new interpreter', on: 'fork them from a zygote' },
    raw,
  );
}

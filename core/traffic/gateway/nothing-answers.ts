import { SvcError } from '../../model/errors.js';

/**
 * The one answer for a URL that is not the caller's to reach: nothing serves
 * it, or a workload of another workspace does. They must read the same, word
 * for word, or the difference would tell anyone which apps exist elsewhere.
 */
export function nothingAnswers(path: string): SvcError {
  return new SvcError('not_found', `nothing answers at ${path}.`, {
    hint: 'Workload URLs look like /<workspace>/<app>/<workload>/<route>; svc serve and svc deploy print them.',
  });
}

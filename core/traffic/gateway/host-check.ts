import { isSvcError, type SvcError } from '../../model/errors.js';
import { parseRequestUrl } from './request-url.js';

/** Hosts judged so far; a client sends the same few, so the table stays small. Cleared when full. */
const judged = new Map<string, SvcError | null>();
const MAX_JUDGED = 1024;

/**
 * Throws `bad_request` for a missing or malformed Host header, by the rules
 * of request-url.ts (the ones Koa's requests are held to), remembering the
 * verdict per distinct value: the hot path pays one Map lookup, not two URL parses.
 */
export function checkHost(host: string): void {
  let verdict = judged.get(host);
  if (verdict === undefined) {
    verdict = judge(host);
    if (judged.size >= MAX_JUDGED) judged.clear();
    judged.set(host, verdict);
  }
  if (verdict !== null) throw verdict;
}

function judge(host: string): SvcError | null {
  try {
    parseRequestUrl('http', host, '/');
    return null;
  } catch (error) {
    if (isSvcError(error)) return error;
    throw error;
  }
}

/**
 * One batch of a map's inputs (`POST /api/v1/maps/:id/inputs`), checked whole
 * before any of it is taken: an NDJSON body of `{"index": n, "pickle":
 * "<base64>"}` lines whose indices continue the map's sequence exactly. The
 * map keeps only the next index it expects, not the indices it saw, so its
 * memory stays flat however many inputs come; a batch that breaks a rule
 * changes nothing.
 */
import { SvcError } from '../../model/errors.js';
import type { MapInput } from './types.js';

/** Inputs one batch may hold: a client sends more in more batches. */
export const MAX_BATCH_INPUTS = 1000;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const LINE_HINT = 'Send one JSON object per line: {"index": <n>, "pickle": "<base64 of pickle.dumps({"args": [...], "kwargs": {...}})>"}.';

/** The inputs of `body`, the first of which must have index `expected`; `bad_request` naming the line that breaks a rule. */
export function parseBatch(body: Buffer, expected: number): MapInput[] {
  const inputs: MapInput[] = [];
  const lines = body.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    if (inputs.length === MAX_BATCH_INPUTS) {
      throw new SvcError('bad_request', `the batch holds more than ${MAX_BATCH_INPUTS} inputs, the most one batch may hold.`, {
        hint: `Send the inputs in batches of at most ${MAX_BATCH_INPUTS}, one request after the other.`,
        details: { line: i + 1, maxInputs: MAX_BATCH_INPUTS },
      });
    }
    inputs.push(parseInput(line, i + 1, expected + inputs.length));
  }
  return inputs;
}

function parseInput(line: string, number: number, expected: number): MapInput {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw lineError(number, `is not JSON: ${(error as Error).message}`, expected);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw lineError(number, 'is not a JSON object', expected);
  const { index, pickle, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    throw lineError(number, `has the field ${JSON.stringify(unknown)}; an input has only index and pickle`, expected);
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0)
    throw lineError(number, `has the index ${JSON.stringify(index ?? null)}, not a whole number from 0`, expected);
  if (index !== expected) {
    throw new SvcError('bad_request', `line ${number} of the batch has the index ${index}; the map expects ${expected} next.`, {
      hint: 'Number the inputs 0, 1, 2, … across all batches, each batch continuing where the last one ended; GET the map to see how many it received.',
      details: { line: number, index, expected },
    });
  }
  if (typeof pickle !== 'string' || pickle === '' || pickle.length % 4 !== 0 || !BASE64.test(pickle))
    throw lineError(number, 'has a pickle that is not base64 (standard alphabet, padded)', expected);
  return { index, pickle: Buffer.from(pickle, 'base64') };
}

function lineError(number: number, what: string, expected: number): SvcError {
  return new SvcError('bad_request', `line ${number} of the batch ${what}.`, { hint: LINE_HINT, details: { line: number, expected } });
}

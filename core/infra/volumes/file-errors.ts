/**
 * What can be wrong with a file operation in a volume, in one set of words, wherever the files are: the
 * folder storage throws these itself, the keeper's answers (`{"problem": …}`) are turned into them.
 */
import { SvcError } from '../../model/errors.js';

/** A page of a listing holds at most this many entries (a recursive one's included); a listing asked for whole stops there. */
export const MAX_LIST_ENTRIES = 10_000;

const quoted = (shown: string) => JSON.stringify(shown || '/');

export const fileErrors = {
  outside: (shown: string) =>
    new SvcError('bad_request', `the path ${JSON.stringify(shown)} leads outside the volume (through a symbolic link).`, {
      hint: 'Name a file or folder inside the volume; links that point elsewhere are not followed.',
    }),
  notFound: (volume: string, shown: string) =>
    new SvcError('not_found', `the volume ${volume} has no file or folder ${JSON.stringify(shown)}.`, {
      hint: `svc volume ls ${volume} lists what it holds.`,
    }),
  tooMany: (shown: string) =>
    new SvcError('bad_request', `${quoted(shown)} holds more than ${MAX_LIST_ENTRIES} entries.`, {
      hint: 'Ask for it in pages (limit= and after=, as svc volume ls and vol.listdir do), or list a folder further down.',
      details: { field: 'path', maxEntries: MAX_LIST_ENTRIES },
    }),
  rootNotAFile: () =>
    new SvcError('bad_request', 'a file needs a path inside the volume, not its root.', { hint: 'Name the file: "data/train.csv".' }),
  parentIsAFile: (volume: string, parent: string) =>
    new SvcError('conflict', `${JSON.stringify(parent)} is a file in the volume ${volume}, not a folder.`),
  folderInTheWay: (volume: string, shown: string) =>
    new SvcError('conflict', `${JSON.stringify(shown)} is a folder in the volume ${volume}; a file cannot replace it.`, {
      hint: `Remove it first (svc volume rm ${volume} ${shown} --recursive) or choose another path.`,
    }),
  folderNotFile: (volume: string, shown: string) =>
    new SvcError('bad_request', `${quoted(shown)} is a folder in the volume ${volume}, not a file.`, {
      hint: `Get a folder with the CLI, which fetches each file: svc volume get ${volume} ${shown || '/'} <local folder>.`,
    }),
  rootNotRemovable: (volume: string) =>
    new SvcError('bad_request', "a volume's root cannot be removed.", { hint: `Delete the volume itself: svc volume delete ${volume}.` }),
  needsRecursive: (volume: string, shown: string) =>
    new SvcError('bad_request', `${JSON.stringify(shown)} is a folder in the volume ${volume}.`, {
      hint: `Remove it and what it holds with --recursive (API: ?recursive=true).`,
    }),
  cutOff: (shown: string, cause?: unknown) =>
    new SvcError('client_closed', `the upload of ${JSON.stringify(shown)} was cut off before its end; nothing was kept.`, { cause }),
};

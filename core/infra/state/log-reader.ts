/**
 * Replays a state log into memory. Damage anywhere is `state_corrupt` with
 * the file and the byte offset; the only thing forgiven is the end of the
 * file after the last whole record — a write cut short by a crash (a partial
 * record, or zeros a file system left after a power cut), which was never
 * acknowledged because its fsync had not returned.
 */
import { readFile } from 'node:fs/promises';
import { SvcError } from '../../model/errors.js';
import { StateImage } from './image.js';
import { decodePayload, FILE_HEADER_BYTES, FORMAT_VERSION, MAGIC, readRecordHeader, RECORD_HEADER_BYTES } from './log-codec.js';

export interface ReplayedLog {
  readonly image: StateImage;
  /** Bytes of whole, valid records (with the file header): where the next append goes. */
  readonly validLength: number;
  /** The unacknowledged tail that was dropped, if any. */
  readonly tornTail: { readonly offset: number; readonly bytes: number } | null;
}

export async function replayLog(file: string): Promise<ReplayedLog> {
  const bytes = await readFile(file);
  checkFileHeader(file, bytes);
  const image = new StateImage();
  let offset = FILE_HEADER_BYTES;
  while (offset < bytes.length) {
    const header = bytes.length - offset < RECORD_HEADER_BYTES ? null : readRecordHeader(bytes, offset);
    if (header !== null && !header.ok && !isAllZero(bytes, offset)) throw corrupt(file, offset, header.reason);
    const end = header?.ok ? offset + RECORD_HEADER_BYTES + header.payloadLength : Infinity;
    if (header === null || !header.ok || end > bytes.length) {
      // A log is born whole (written, synced, then renamed into place): only a later append can be cut short.
      if (offset === FILE_HEADER_BYTES) throw corrupt(file, offset, 'the first record is incomplete');
      return { image, validLength: offset, tornTail: { offset, bytes: bytes.length - offset } };
    }
    try {
      const record = decodePayload(bytes.subarray(offset + RECORD_HEADER_BYTES, end), header.payloadCrc);
      if (offset === FILE_HEADER_BYTES && record.kind !== 'index') throw new Error('a log must start with an index record');
      image.apply(record);
    } catch (error) {
      throw corrupt(file, offset, (error as Error).message);
    }
    offset = end;
  }
  if (offset === FILE_HEADER_BYTES) throw corrupt(file, offset, 'the log has no index record');
  return { image, validLength: offset, tornTail: null };
}

function checkFileHeader(file: string, bytes: Buffer): void {
  if (bytes.length < FILE_HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw corrupt(file, 0, `not an svc state log (it does not start with "${MAGIC.toString('latin1')}")`);
  }
  const version = bytes.readUInt32LE(MAGIC.length);
  if (version !== FORMAT_VERSION) {
    throw corrupt(
      file,
      MAGIC.length,
      `format version ${version}, but this svc reads version ${FORMAT_VERSION} (written by another svc version?)`,
    );
  }
}

function isAllZero(bytes: Buffer, from: number): boolean {
  for (let i = from; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

export function corrupt(file: string, offset: number, reason: string): SvcError {
  const hint =
    offset <= FILE_HEADER_BYTES
      ? `Stop svc and keep a copy of ${file}. Restore it from a backup of the data dir; or, to start with empty state, move it away.`
      : `Stop svc and keep a copy of ${file}. Restore the data dir from a backup; or keep every write before the damage with ` +
        `\`truncate -s ${offset} ${file}\` (writes after byte ${offset} are lost). See docs/state.md.`;
  return new SvcError('state_corrupt', `the state log ${file} is damaged at byte ${offset}: ${reason}`, {
    hint,
    details: { file, offset, reason },
  });
}

/**
 * The bytes of the state log (docs/state.md, "On disk").
 *
 *   file   = magic "SVCSTATE" (8 bytes) · format version u32 LE · record*
 *   record = payload length u32 LE · crc32(payload) u32 LE · crc32(the 8 bytes before) u32 LE · payload
 *   payload = kind u8 · index u64 LE · by kind:
 *     index(0)        nothing
 *     put(1)          createIndex u64 LE · key length u16 LE · key (UTF-8) · value (the rest)
 *     delete(2)       key (UTF-8, the rest)
 *     deleteTree(3)   prefix (UTF-8, the rest)
 *
 * The header has its own checksum so that a damaged length is reported as
 * damage instead of being mistaken for a record cut short by a crash.
 */
import { crc32 } from 'node:zlib';
import type { StateRecord } from './image.js';

export const MAGIC = Buffer.from('SVCSTATE', 'latin1');
export const FORMAT_VERSION = 1;
export const FILE_HEADER_BYTES = MAGIC.length + 4;
export const RECORD_HEADER_BYTES = 12;
/** Larger than any valid payload (512 KiB value + 512 byte key + fields); a bigger length is damage. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

const KIND_CODES = { index: 0, put: 1, delete: 2, deleteTree: 3 } as const;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function encodeFileHeader(): Buffer {
  const header = Buffer.alloc(FILE_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(FORMAT_VERSION, MAGIC.length);
  return header;
}

export function encodeRecord(record: StateRecord): Buffer {
  const payload = encodePayload(record);
  const frame = Buffer.alloc(RECORD_HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(payload), 4);
  frame.writeUInt32LE(crc32(frame.subarray(0, 8)), 8);
  payload.copy(frame, RECORD_HEADER_BYTES);
  return frame;
}

function encodePayload(record: StateRecord): Buffer {
  const fixed = Buffer.alloc(9);
  fixed.writeUInt8(KIND_CODES[record.kind], 0);
  fixed.writeBigUInt64LE(BigInt(record.index), 1);
  switch (record.kind) {
    case 'index':
      return fixed;
    case 'put': {
      const key = Buffer.from(record.key, 'utf8');
      const middle = Buffer.alloc(10);
      middle.writeBigUInt64LE(BigInt(record.createIndex), 0);
      middle.writeUInt16LE(key.length, 8);
      return Buffer.concat([fixed, middle, key, record.value]);
    }
    case 'delete':
      return Buffer.concat([fixed, Buffer.from(record.key, 'utf8')]);
    case 'deleteTree':
      return Buffer.concat([fixed, Buffer.from(record.prefix, 'utf8')]);
  }
}

/** What the record header at `offset` says, or why it cannot be trusted. */
export type HeaderRead =
  | { readonly ok: true; readonly payloadLength: number; readonly payloadCrc: number }
  | { readonly ok: false; readonly reason: string };

export function readRecordHeader(bytes: Buffer, offset: number): HeaderRead {
  const header = bytes.subarray(offset, offset + RECORD_HEADER_BYTES);
  if (crc32(header.subarray(0, 8)) !== header.readUInt32LE(8)) return { ok: false, reason: 'record header checksum mismatch' };
  const payloadLength = header.readUInt32LE(0);
  if (payloadLength < 9 || payloadLength > MAX_PAYLOAD_BYTES) return { ok: false, reason: `impossible record length ${payloadLength}` };
  return { ok: true, payloadLength, payloadCrc: header.readUInt32LE(4) };
}

/** Decodes a payload whose checksum matched; throws a plain Error when it is malformed. */
export function decodePayload(payload: Buffer, expectedCrc: number): StateRecord {
  if (crc32(payload) !== expectedCrc) throw new Error('record checksum mismatch');
  const code = payload.readUInt8(0);
  const index = readIndex(payload, 1);
  switch (code) {
    case KIND_CODES.index:
      if (payload.length !== 9) throw new Error('index record has trailing bytes');
      return { kind: 'index', index };
    case KIND_CODES.put: {
      if (payload.length < 19) throw new Error('put record is too short');
      const createIndex = readIndex(payload, 9);
      const keyLength = payload.readUInt16LE(17);
      if (19 + keyLength > payload.length) throw new Error('put record key runs past the record');
      const key = utf8.decode(payload.subarray(19, 19 + keyLength));
      return { kind: 'put', index, createIndex, key, value: Buffer.from(payload.subarray(19 + keyLength)) };
    }
    case KIND_CODES.delete:
      return { kind: 'delete', index, key: utf8.decode(payload.subarray(9)) };
    case KIND_CODES.deleteTree:
      return { kind: 'deleteTree', index, prefix: utf8.decode(payload.subarray(9)) };
    default:
      throw new Error(`unknown record kind ${code}`);
  }
}

function readIndex(bytes: Buffer, offset: number): number {
  const value = bytes.readBigUInt64LE(offset);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('index out of range');
  return Number(value);
}

/**
 * The GPU inventory as `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv`
 * prints it, header line included:
 *
 *     index, uuid, name, memory.total [MiB]
 *     0, GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11, NVIDIA H200, 143771 MiB
 *
 * Columns are found by their header, so their order does not matter; a field may be quoted
 * (`"NVIDIA A100, 80GB"`), spaces around fields are dropped, and `[N/A]` memory is unknown.
 */
import { modelOfGpu } from './gpu-names.js';

/** The query svc runs (and the columns a `SVC_GPU_INVENTORY` file must have). */
export const NVIDIA_SMI_QUERY = ['--query-gpu=index,uuid,name,memory.total', '--format=csv'] as const;

/** One GPU of the machine. */
export interface GpuDevice {
  /** nvidia-smi's index (what `CUDA_VISIBLE_DEVICES=0` would name). */
  readonly index: number;
  /** `GPU-…`: what svc hands containers, since indexes change with `CUDA_VISIBLE_DEVICES` and reboots. */
  readonly uuid: string;
  /** As the driver reports it: `NVIDIA H100 80GB HBM3`. */
  readonly name: string;
  readonly memoryMiB: number | null;
  /** svc's name of its model (gpu-names.ts): `H100`, `A100-80GB`. */
  readonly model: string;
}

const COLUMNS = ['index', 'uuid', 'name', 'memory.total'] as const;

/** The fields of one CSV line: comma-separated, each optionally in double quotes (`""` is a quote), trimmed. */
export function csvFields(line: string): string[] {
  const fields: string[] = [];
  let at = 0;
  for (;;) {
    while (line[at] === ' ' || line[at] === '\t') at += 1;
    let field = '';
    if (line[at] === '"') {
      at += 1;
      while (at < line.length && !(line[at] === '"' && line[at + 1] !== '"')) {
        field += line[at];
        at += line[at] === '"' ? 2 : 1;
      }
      at += 1;
      const comma = line.indexOf(',', at);
      at = comma < 0 ? line.length : comma;
    } else {
      const comma = line.indexOf(',', at);
      const end = comma < 0 ? line.length : comma;
      field = line.slice(at, end);
      at = end;
    }
    fields.push(field.trim());
    if (at >= line.length) return fields;
    at += 1;
  }
}

/** `143771 MiB` → 143771; `[N/A]` → null; anything else: the problem. */
function memoryOf(text: string): number | null | string {
  if (/^\[?N\/A\]?$/i.test(text) || text === '') return null;
  const match = /^(\d+)\s*(MiB)?$/i.exec(text);
  return match === null ? `memory.total ${JSON.stringify(text)} is not "<integer> MiB"` : Number(match[1]);
}

/**
 * The GPUs `text` lists; throws an Error naming the line and what is wrong with it (a missing
 * column, a field that is not a number, a UUID twice). An empty text or a header alone: no GPUs.
 */
export function parseNvidiaSmiCsv(text: string): GpuDevice[] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line, at) => ({ line, number: at + 1 }))
    .filter(({ line }) => line.trim() !== '');
  const header = lines.shift();
  if (header === undefined) return [];
  // `memory.total [MiB]`: the unit in brackets is not part of the column's name.
  const names = csvFields(header.line).map((field) => field.replace(/\s*\[.*\]$/, '').toLowerCase());
  const missing = COLUMNS.filter((column) => !names.includes(column));
  if (missing.length > 0)
    throw new Error(
      `line 1 lacks the column${missing.length === 1 ? '' : 's'} ${missing.join(', ')}: the first line is the header of nvidia-smi ${NVIDIA_SMI_QUERY.join(' ')}`,
    );
  const seen = new Set<string>();
  return lines.map(({ line, number }) => {
    const fields = csvFields(line);
    const field = (column: (typeof COLUMNS)[number]) => fields[names.indexOf(column)] ?? '';
    const fail = (problem: string) => new Error(`line ${number} (${JSON.stringify(line.trim())}): ${problem}`);
    if (fields.length < names.length) throw fail(`has ${fields.length} fields, the header ${names.length}`);
    const index = field('index');
    if (!/^\d+$/.test(index)) throw fail(`index ${JSON.stringify(index)} is not a whole number`);
    const uuid = field('uuid');
    if (!/^(GPU|MIG)-[A-Za-z0-9-]+$/.test(uuid)) throw fail(`uuid ${JSON.stringify(uuid)} is not a GPU UUID ("GPU-…")`);
    if (seen.has(uuid)) throw fail(`uuid ${uuid} is listed twice`);
    seen.add(uuid);
    const name = field('name');
    if (name === '') throw fail('has no name');
    const memoryMiB = memoryOf(field('memory.total'));
    if (typeof memoryMiB === 'string') throw fail(memoryMiB);
    return { index: Number(index), uuid, name, memoryMiB, model: modelOfGpu(name, memoryMiB) };
  });
}

/**
 * GPU model names, as users write them (`gpu="H100"`, `"a100-80gb"`, `"RTX 4090"`) and as
 * NVIDIA's tools report them (`NVIDIA H100 80GB HBM3`, `NVIDIA A100-SXM4-80GB`, `Tesla T4`),
 * brought to one form so that both can be compared. The rule (docs/gpus.md#names):
 *
 * - upper case; anything but letters and digits separates words (a hyphen in svc's form); a leading `NVIDIA`, `Tesla`, `GeForce` or
 *   `Quadro` is dropped;
 * - the family is the first word (`H100`, `A100`, `L40S`, `T4`), or `RTX`/`GTX`/`TITAN` with
 *   the word after it (`RTX-4090`, `RTX-A6000`); families are compared without hyphens, so
 *   `RTX4090` is `RTX-4090`, and whole (`L40` is not `L40S`, `L4` is not `L40`);
 * - a word like `80GB` anywhere is the memory size; the other words (`SXM4`, `PCIE`, `HBM3`,
 *   `NVL`) are the form factor, which no name asks for;
 * - a requested name matches a GPU of its family; a requested size (`A100-80GB`) must be the
 *   GPU's too, so `A100` matches every A100 and `A100-80GB` only the 80 GB ones.
 */

/** What the `gpu` option calls "whatever GPU the machine has". */
export const ANY_GPU = 'any';

/** A model name as the manifest carries it: upper-case words of letters and digits joined by hyphens, or `any`. */
export const GPU_MODEL_PATTERN = /^(any|[A-Z0-9]+(-[A-Z0-9]+)*)$/;
export const GPU_MODEL_MAX_CHARS = 40;

const VENDOR_WORDS = new Set(['NVIDIA', 'TESLA', 'GEFORCE', 'QUADRO']);
/** Words that name a product line, not a model: the model is the next word too. */
const LINE_WORDS = new Set(['RTX', 'GTX', 'TITAN']);
const LINE_GLUED = /^(RTX|GTX|TITAN)([A-Z]?\d[A-Z0-9]*)$/;
const MEMORY_WORD = /^(\d+)GB?$/;
/** Families NVIDIA sells under one name in several memory sizes: their model name says the size (`A100-80GB`, as Modal's). */
const SIZED_FAMILIES = new Set(['A100']);

/** A model name, read: its family and, when it says one, its memory size in GB. */
export interface GpuModel {
  /** `H100`, `A100`, `RTX-4090`. */
  readonly family: string;
  readonly memoryGB: number | null;
}

function words(name: string): string[] {
  const all = name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((word) => word !== '')
    // `RTX4090` is `RTX 4090`.
    .flatMap((word) => {
      const line = LINE_GLUED.exec(word);
      return line === null ? [word] : [line[1]!, line[2]!];
    });
  let start = 0;
  while (start < all.length - 1 && VENDOR_WORDS.has(all[start]!)) start += 1;
  return all.slice(start);
}

/** Reads any spelling of a model name (a user's or NVIDIA's); null when it has no family word. */
export function readGpuModel(name: string): GpuModel | null {
  const all = words(name);
  const first = all[0];
  if (first === undefined || MEMORY_WORD.test(first)) return null;
  const lineModel = LINE_WORDS.has(first) && all.length > 1 && !MEMORY_WORD.test(all[1]!);
  const family = lineModel ? `${first}-${all[1]}` : first;
  const memory = all.slice(lineModel ? 2 : 1).find((word) => MEMORY_WORD.test(word));
  return { family, memoryGB: memory === undefined ? null : Number(MEMORY_WORD.exec(memory)![1]) };
}

/** The family without hyphens: how two spellings of one family compare. */
const familyKey = (family: string): string => family.replaceAll('-', '');

/**
 * The manifest's form of a requested model (`"a100 80gb"` → `A100-80GB`, `"nvidia h100"` → `H100`,
 * `"Any"` → `any`), or null when the name has no family word.
 */
export function canonicalModel(name: string): string | null {
  if (name.trim().toLowerCase() === ANY_GPU) return ANY_GPU;
  const model = readGpuModel(name);
  if (model === null) return null;
  return model.memoryGB === null ? model.family : `${model.family}-${model.memoryGB}GB`;
}

/**
 * The model a GPU of the machine is, as svc shows it and as `SVC_GPU_MODEL` says it: its family,
 * with its size for the families sold in several (`A100-80GB`); `memoryMiB` gives the size
 * when the name does not.
 */
export function modelOfGpu(name: string, memoryMiB: number | null = null): string {
  const model = readGpuModel(name);
  if (model === null) return name.trim();
  const memoryGB = model.memoryGB ?? (memoryMiB === null ? null : Math.round(memoryMiB / 1024));
  return SIZED_FAMILIES.has(model.family) && memoryGB !== null ? `${model.family}-${memoryGB}GB` : model.family;
}

/** Whether a GPU the machine reports as `name` (with `memoryMiB`) is a `requested` model (a manifest's model name, or `any`). */
export function gpuMatches(requested: string, name: string, memoryMiB: number | null = null): boolean {
  if (requested === ANY_GPU) return true;
  const want = readGpuModel(requested);
  const have = readGpuModel(name);
  if (want === null || have === null || familyKey(want.family) !== familyKey(have.family)) return false;
  if (want.memoryGB === null) return true;
  const memoryGB = have.memoryGB ?? (memoryMiB === null ? null : Math.round(memoryMiB / 1024));
  return memoryGB === want.memoryGB;
}

/**
 * A regular expression (RE2, as Nomad's `regexp` operand takes it, case-insensitive) that
 * matches the model names NVIDIA's driver reports for a `requested` model, by the rule above:
 * what Nomad compares with `${device.model}`, which is that full name (`NVIDIA H100 80GB HBM3`),
 * so that `=` with `H100` would never match. Without the `(?i)` prefix, which JavaScript's
 * RegExp lacks: callers add it (or the `i` flag).
 */
const SEPARATOR = '[^A-Za-z0-9]';

export function gpuModelPattern(requested: string): string {
  const model = readGpuModel(requested);
  if (model === null) throw new Error(`gpuModelPattern: ${JSON.stringify(requested)} is not a model name`);
  const family = model.family
    .split('-')
    .map((word) => word.replace(/[^A-Z0-9]/g, ''))
    .join(`${SEPARATOR}?`);
  const vendor = `((${[...VENDOR_WORDS].join('|')})${SEPARATOR}+)*`;
  const size = model.memoryGB === null ? '' : `(.*${SEPARATOR})?${model.memoryGB}GB?(${SEPARATOR}|$)`;
  return `^${vendor}${family}(${SEPARATOR}|$)${size}`;
}

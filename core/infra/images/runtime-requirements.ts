import { readFile } from 'node:fs/promises';
import { runtimeRequirementsFile } from '../../model/paths.js';

/** The runtime's own pip requirements (uvicorn…), one per line, without comments; every builder installs them. */
export async function readRuntimeRequirements(): Promise<string[]> {
  const text = await readFile(runtimeRequirementsFile, 'utf8');
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
}

import { stat } from 'node:fs/promises';

/** True when something is at `file` (followed if a link); false when nothing is; any other failure (no permission) is thrown. */
export async function pathExists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { replaceFile } from '../../files/replace-file.js';

/** An image this builder pushed: where it is, pinned by digest. */
export interface PushedRecord {
  readonly reference: string;
  readonly repository: string;
  readonly digest: string;
}

/** The images pushed, one file per build key under `<root>/images/`: a build whose image the registry still has is not done again. */
export class PushedRecords {
  constructor(private readonly root: string) {}

  async read(key: string): Promise<PushedRecord | null> {
    try {
      const value = JSON.parse(await readFile(this.file(key), 'utf8')) as PushedRecord;
      return typeof value.reference === 'string' && typeof value.digest === 'string' && typeof value.repository === 'string' ? value : null;
    } catch {
      return null;
    }
  }

  write(key: string, record: PushedRecord): Promise<void> {
    return replaceFile(this.file(key), JSON.stringify(record));
  }

  private file(key: string): string {
    return path.join(this.root, 'images', `${key}.json`);
  }
}

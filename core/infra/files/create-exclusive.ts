import { randomBytes } from 'node:crypto';
import { link, open, unlink } from 'node:fs/promises';

/**
 * Creates `file` (mode 0600) with `content` unless it exists; false when it
 * does. The content goes to a private temp file first, synced, and is then
 * hard-linked into place: link(2) fails with EEXIST instead of replacing (unlike
 * rename), so a concurrent creator's file is never clobbered and readers never
 * see a half-written one. Used for the owner token and the state store's lock.
 */
export async function createExclusive(file: string, content: string): Promise<boolean> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    return createWithoutLink(file, content); // file systems without hard links
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** O_EXCL create, then write: still never clobbers, but a reader may briefly see an empty file. */
async function createWithoutLink(file: string, content: string): Promise<boolean> {
  try {
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

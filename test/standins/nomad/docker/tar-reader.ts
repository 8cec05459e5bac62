/** Reads the entries of a tar archive with tar-stream (ustar, GNU long names, pax `path`/`linkpath`/`size`). */
import tar from 'tar-stream';

export interface TarEntry {
  readonly name: string;
  /** `0` file, `1` hard link, `2` symlink, `3`/`4` devices, `5` directory, `6` fifo. */
  readonly type: string;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly linkname: string;
  readonly data: Buffer;
}

const TYPE_FLAGS: Record<tar.Header['type'], string> = {
  file: '0',
  'contiguous-file': '0',
  link: '1',
  symlink: '2',
  'character-device': '3',
  'block-device': '4',
  directory: '5',
  fifo: '6',
};

export async function* readTar(archive: Buffer): AsyncGenerator<TarEntry> {
  const extract = tar.extract();
  extract.end(archive);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    const { header } = entry;
    const type = (header.type as tar.Header['type'] | null) === null ? '?' : TYPE_FLAGS[header.type];
    yield {
      name: header.name,
      type,
      mode: header.mode,
      uid: header.uid,
      gid: header.gid,
      linkname: header.linkname ?? '',
      data: Buffer.concat(chunks),
    };
  }
}

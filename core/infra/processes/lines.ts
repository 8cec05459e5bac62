/** Calls `onLine` for every line of a text stream (without its `\n` or `\r\n`), the last one too. */
export function splitLines(stream: NodeJS.ReadableStream | null | undefined, onLine: (text: string) => void): void {
  if (!stream) return;
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) onLine(part.replace(/\r$/, ''));
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
    rest = '';
  });
}

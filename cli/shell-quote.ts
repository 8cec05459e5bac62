/** Quotes text for a POSIX shell, so that printed command lines work whatever they contain. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Finds where a JSON text breaks. V8's JSON.parse names the position for
 * some errors only ("Unexpected token '}', ... is not valid JSON" has none),
 * so after a failed parse we rescan the text to point at the first bad
 * character. Only runs on text that JSON.parse rejected.
 */

export interface TextPosition {
  /** 0-based offset into the text. */
  readonly offset: number;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
}

class SyntaxStop {
  constructor(readonly offset: number) {}
}

const numberPattern = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

/** Offset of the first character that makes `text` invalid JSON, or null if it is valid. */
export function jsonErrorOffset(text: string): number | null {
  let i = 0;
  const stop = (): never => {
    throw new SyntaxStop(i);
  };
  const skipSpace = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i += 1;
  };
  const expect = (char: string): void => {
    if (text[i] !== char) stop();
    i += 1;
  };
  const literal = (word: string): void => {
    for (const char of word) expect(char);
  };
  const string = (): void => {
    expect('"');
    for (;;) {
      const char = text[i];
      if (char === undefined || char < ' ') stop();
      if (char === '"') break;
      if (char === '\\') {
        i += 1;
        if (text[i] === 'u') {
          i += 1;
          for (let k = 0; k < 4; k += 1) {
            if (!/[0-9a-fA-F]/.test(text[i] ?? '')) stop();
            i += 1;
          }
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) stop();
      }
      i += 1;
    }
    i += 1;
  };
  const number = (): void => {
    numberPattern.lastIndex = i;
    if (!numberPattern.test(text)) stop();
    i = numberPattern.lastIndex;
  };
  const sequence = (close: string, item: () => void): void => {
    i += 1;
    skipSpace();
    if (text[i] === close) {
      i += 1;
      return;
    }
    for (;;) {
      skipSpace();
      item();
      skipSpace();
      if (text[i] === close) break;
      expect(',');
    }
    i += 1;
  };
  const value = (): void => {
    const char = text[i];
    if (char === '{') {
      sequence('}', () => {
        string();
        skipSpace();
        expect(':');
        skipSpace();
        value();
      });
    } else if (char === '[') sequence(']', value);
    else if (char === '"') string();
    else if (char === 't') literal('true');
    else if (char === 'f') literal('false');
    else if (char === 'n') literal('null');
    else if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) number();
    else stop();
  };

  try {
    skipSpace();
    value();
    skipSpace();
    if (i < text.length) stop();
    return null;
  } catch (error) {
    if (error instanceof SyntaxStop) return error.offset;
    return null; // nested too deep to rescan: no position rather than a wrong one
  }
}

/** Line and column (1-based) of an offset. */
export function positionAt(text: string, offset: number): TextPosition {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { offset, line, column };
}

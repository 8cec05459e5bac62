/**
 * Aligned tables for list commands: one header row, columns separated by two
 * spaces, widths measured without colour codes (so coloured statuses stay
 * aligned), the last column never padded (URLs are printed in full).
 */
import type { Palette } from './output.js';

const ANSI = /\u001b\[[0-9;]*m/g;

export function visibleLength(text: string): number {
  return [...text.replace(ANSI, '')].length;
}

/** The lines of the table: the header (bold) then each row. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[], color?: Pick<Palette, 'bold'>): string[] {
  const widths = header.map((title, column) => Math.max(visibleLength(title), ...rows.map((row) => visibleLength(row[column] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell + ' '.repeat(widths[column]! - visibleLength(cell))))
      .join('  ')
      .trimEnd();
  const head = line(header);
  return [color ? color.bold(head) : head, ...rows.map(line)];
}

/** A status word coloured by what it means: green serving, yellow down on purpose or on its way, red failing. */
export function colorStatus(status: string, color: Palette): string {
  switch (status) {
    case 'running':
    case 'ready':
    case 'active':
    case 'succeeded':
      return color.green(status);
    case 'paused':
    case 'stopped':
    case 'starting':
    case 'idle':
    case 'preview':
    case 'skipped':
      return color.yellow(status);
    case 'failed':
    case 'crash_loop':
    case 'expired':
      return color.red(status);
    default:
      return color.dim(status);
  }
}

/** Reads the manifest fixtures under test/fixtures/manifests (from the source tree, not dist/). */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../../../../core/model/paths.js';

export const manifestFixtures = path.join(packageRoot, 'test', 'fixtures', 'manifests');

export interface ExpectedIssue {
  readonly path: string;
  /** A fragment the issue's message must contain. */
  readonly message: string;
}

export interface InvalidCase {
  readonly name: string;
  readonly description: string;
  readonly manifest: unknown;
  readonly expected: readonly ExpectedIssue[];
}

export function readJsonFixture(relative: string): unknown {
  return JSON.parse(readFileSync(path.join(manifestFixtures, relative), 'utf8'));
}

export function invalidCases(): InvalidCase[] {
  const folder = path.join(manifestFixtures, 'invalid');
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ name: file.replace(/\.json$/, ''), ...(readJsonFixture(path.join('invalid', file)) as Omit<InvalidCase, 'name'>) }));
}

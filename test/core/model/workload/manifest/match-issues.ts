/** Asserts that a list of issues is exactly the expected one: same count, each matched once by path and message fragment. */
import assert from 'node:assert/strict';
import type { ValidationIssue } from '../../../../../core/model/workload/types.js';
import type { ExpectedIssue } from './fixtures.js';

export function assertIssuesExactly(actual: readonly ValidationIssue[], expected: readonly ExpectedIssue[]): void {
  const unmatched = [...actual];
  const missing: ExpectedIssue[] = [];
  for (const want of expected) {
    const index = unmatched.findIndex((issue) => issue.path === want.path && issue.message.includes(want.message));
    if (index === -1) missing.push(want);
    else unmatched.splice(index, 1);
  }
  const show = (list: readonly { path: string; message: string }[]): string =>
    list.map((issue) => `\n    ${issue.path}: ${issue.message}`).join('') || ' none';
  assert.ok(missing.length === 0 && unmatched.length === 0, `issues differ\n  missing:${show(missing)}\n  unexpected:${show(unmatched)}`);
}

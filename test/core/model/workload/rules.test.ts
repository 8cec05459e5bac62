import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../../../core/model/paths.js';
import { optionDefaults } from '../../../../core/model/workload/defaults.js';
import { isDomainName, optionsByKind, optionTable, routeProblems, workloadKinds } from '../../../../core/model/workload/rules.js';

/** Rows of the "Options by kind" table in docs/manifest.md: option → cells per kind. */
function documentedOptions(): Map<string, string[]> {
  const doc = readFileSync(path.join(packageRoot, 'docs', 'manifest.md'), 'utf8');
  const start = doc.indexOf('### Options by kind');
  const section = doc.slice(start, doc.indexOf('\n### ', start + 1));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const match = /^\| `(\w+)` \|(.*)\|$/.exec(line);
    if (match !== null)
      rows.set(
        match[1] as string,
        (match[2] as string).split('|').map((cell) => cell.trim()),
      );
  }
  return rows;
}

describe('option rules', () => {
  const rows = documentedOptions();

  it('have exactly the options docs/manifest.md lists, in its order', () => {
    assert.deepEqual([...rows.keys()], Object.keys(optionTable));
  });

  it('give each kind the options the docs table marks for it', () => {
    workloadKinds.forEach((kind, column) => {
      const documented = [...rows].filter(([, cells]) => cells[column] !== '').map(([name]) => name);
      assert.deepEqual(optionsByKind[kind], documented, kind);
    });
  });

  it('use the defaults the docs table shows in brackets', () => {
    for (const [name, cells] of rows) {
      const shown = cells.find((cell) => cell.startsWith('['));
      assert.ok(shown !== undefined, name);
      if (shown === '[see below]') continue;
      assert.deepEqual(JSON.parse(shown.slice(1, -1)), (optionDefaults as Record<string, unknown>)[name], name);
    }
  });
});

describe('routeProblems()', () => {
  it('accepts plain and parameterised routes', () => {
    for (const route of ['/', '/greet', '/v1/items/', '/a-b_c.d/e..f']) assert.deepEqual(routeProblems(route), [], route);
  });

  it('names each broken rule', () => {
    assert.deepEqual(routeProblems('a//b?c#d e/..'), [
      'must start with "/"',
      'must not contain "?"',
      'must not contain "#"',
      'must not contain whitespace',
      'must not contain "//"',
      'must not contain "." or ".." segments',
      "may only contain letters, digits and - . _ ~ ! $ & ' ( ) * + , ; = : @ / (nothing that needs percent-encoding)",
    ]);
  });

  it('refuses routes that would need percent-encoding, since the gateway matches the raw path', () => {
    for (const route of ['/café', '/a%20b', '/a<b>']) assert.equal(routeProblems(route).length, 1, route);
    assert.deepEqual(routeProblems("/v1/items:batch/~a/@x/$!&'()*+,;="), []);
  });

  it('keeps /_svc for the runtime', () => {
    assert.deepEqual(routeProblems('/_svc/health'), ['must not be under /_svc/, which svc reserves for itself']);
    assert.deepEqual(routeProblems('/_svc'), ['must not be under /_svc/, which svc reserves for itself']);
    assert.deepEqual(routeProblems('/_svcx'), []);
  });
});

describe('isDomainName()', () => {
  it('accepts lower-case dotted names with RFC 1123 labels', () => {
    for (const host of ['api.example.com', 'a.b', '1-2.x9.io', `${'a'.repeat(63)}.com`]) assert.equal(isDomainName(host), true, host);
  });

  it('rejects single labels, upper case, bad hyphens, empty and long labels', () => {
    const bad = [
      'localhost',
      'Api.example.com',
      '-a.com',
      'a-.com',
      'a..com',
      'a.com.',
      `${'a'.repeat(64)}.com`,
      'a_b.com',
      `${'a.'.repeat(127)}aa`,
    ];
    for (const host of bad) assert.equal(isDomainName(host), false, host);
  });
});

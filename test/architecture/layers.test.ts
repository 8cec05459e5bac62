/**
 * core/'s layers (docs/architecture.md, "Layers"): every import points down a
 * layer or stays in its own, no folders import each other in a circle, and
 * every folder has its line in the doc. The layer order and each folder's
 * job are declared once, in that doc's table; this test reads them from it.
 * Imports are read with TypeScript's own parser, from the sources.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { packageRoot } from '../../core/model/paths.js';

interface Row {
  readonly layer: string;
  readonly folder: string;
}

/** The rows of the table under "## Layers", top layer first: `| layer | \`folder\` | job |`. */
function layerTable(): Row[] {
  const doc = readFileSync(path.join(packageRoot, 'docs', 'architecture.md'), 'utf8');
  const section = doc.split(/^## /m).find((part) => part.startsWith('Layers\n'));
  assert.ok(section, 'docs/architecture.md has a "## Layers" section');
  return [...section.matchAll(/^\| *([a-z]+) *\| *`([^`]+)` *\|/gm)].map((match) => ({ layer: match[1]!, folder: match[2]! }));
}

const rows = layerTable();
/** Layer names, lowest first. */
const order = [...new Set(rows.map((row) => row.layer))].reverse();
const rank = (layer: string): number => order.indexOf(layer);

/** The folder an import graph node is: core/<layer>/<folder>, a loose core/<layer>/<file>.ts, or a top-level folder. */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'core') return parts[0]!;
  return parts.slice(0, Math.min(parts.length, 3)).join('/');
}

function layerOf(folder: string): string {
  if (folder.startsWith('core/')) return folder.split('/')[1]!;
  const row = rows.find((entry) => entry.folder === folder);
  assert.ok(row, `docs/architecture.md's layer table names ${folder}`);
  return row.layer;
}

interface Import {
  readonly from: string;
  readonly to: string;
  /** Only types cross (`import type`, `export type … from`, or every named binding `type`). */
  readonly typeOnly: boolean;
}

function typeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) return node.isTypeOnly;
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && named !== undefined && ts.isNamedImports(named) && named.elements.every((element) => element.isTypeOnly);
}

/** Every relative import between core/, config/ and jobs/ files (static, dynamic and re-exports). */
function imports(): Import[] {
  const out: Import[] = [];
  for (const dir of ['core', 'config', 'jobs']) {
    for (const name of readdirSync(path.join(packageRoot, dir), { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts')) continue;
      const file = `${dir}/${name.split(path.sep).join('/')}`;
      const source = ts.createSourceFile(file, readFileSync(path.join(packageRoot, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const typeOnlySpecs = new Set<string>();
      const specs = new Set<string>();
      for (const statement of source.statements) {
        if (
          (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
          statement.moduleSpecifier &&
          ts.isStringLiteral(statement.moduleSpecifier)
        ) {
          if (typeOnly(statement)) typeOnlySpecs.add(statement.moduleSpecifier.text);
        }
      }
      for (const entry of ts.preProcessFile(source.text, true, true).importedFiles) specs.add(entry.fileName);
      for (const spec of specs) {
        if (!spec.startsWith('.')) continue;
        const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts');
        if (/^(core|config|jobs)\//.test(to)) out.push({ from: file, to, typeOnly: typeOnlySpecs.has(spec) });
      }
    }
  }
  return out;
}

const all = imports();

/** The services layer may name the data plane's types through a traffic folder's face, types.ts, and nothing else of it. */
function throughTrafficFace(edge: Import): boolean {
  const to = folderOf(edge.to);
  return layerOf(folderOf(edge.from)) === 'services' && layerOf(to) === 'traffic' && edge.to === `${to}/types.ts` && edge.typeOnly;
}

/** Strongly connected components of more than one folder (Tarjan). */
function circles(edges: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('core/ layers', () => {
  it('docs/architecture.md declares the layers, top first: platform, config, http, traffic, services, infra, model', () => {
    assert.deepEqual(order, ['model', 'infra', 'services', 'traffic', 'http', 'config', 'platform']);
  });

  it('every folder of core/ sits in a declared layer, and the layer table gives each its job (and names nothing that is gone)', () => {
    const core = path.join(packageRoot, 'core');
    const loose = readdirSync(core).filter((name) => !statSync(path.join(core, name)).isDirectory());
    assert.deepEqual(loose, [], 'core/ holds only its layer folders');
    const layers = readdirSync(core).sort();
    assert.deepEqual(layers, order.filter((layer) => layer !== 'config').sort());
    const named = new Set(rows.map((row) => row.folder));
    const folders = layers.flatMap((layer) => readdirSync(path.join(core, layer)).map((name) => `core/${layer}/${name}`));
    const missing = folders.filter((folder) => !named.has(folder) && !named.has(folder.split('/').slice(0, 2).join('/')));
    assert.deepEqual(missing, [], 'folders and loose files the layer table does not describe');
    const stale = rows.filter((row) => !statSync(path.join(packageRoot, row.folder), { throwIfNoEntry: false }));
    assert.deepEqual(stale, [], 'rows naming a folder that does not exist');
    const misplaced = rows.filter((row) => row.folder.startsWith('core/') && row.folder.split('/')[1] !== row.layer);
    assert.deepEqual(misplaced, [], 'rows whose folder is not under core/<layer>/');
  });

  it('no import runs up a layer (services name the data plane only by the types its folders declare in types.ts)', () => {
    const upward = all.filter((edge) => rank(layerOf(folderOf(edge.to))) > rank(layerOf(folderOf(edge.from))) && !throughTrafficFace(edge));
    assert.deepEqual(
      upward.map((edge) => `${edge.from} imports ${edge.to}`),
      [],
    );
  });

  it('no folders import each other in a circle', () => {
    const edges = new Map<string, Set<string>>();
    for (const edge of all) {
      const from = folderOf(edge.from);
      const to = folderOf(edge.to);
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
    const found = circles(edges).map((component) => {
      const inside = all.filter(
        (edge) =>
          component.includes(folderOf(edge.from)) && component.includes(folderOf(edge.to)) && folderOf(edge.from) !== folderOf(edge.to),
      );
      return `${component.join(' ⇄ ')}: ${inside.map((edge) => `${edge.from} → ${edge.to}`).join(', ')}`;
    });
    assert.deepEqual(found, []);
  });
});

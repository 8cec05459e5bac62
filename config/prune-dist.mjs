// Before each incremental build (npm run build): tsc reuses dist/ and dist/.tsbuildinfo, so first
// (1) delete what a removed or renamed source left in dist/ (a deleted test must not run on), and
// (2) if a source's output is missing from dist/ (deleted by hand), drop .tsbuildinfo so that tsc
// builds everything again instead of trusting it. Plain JavaScript: it runs before anything is built.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dist = path.join(root, 'dist');
const buildInfo = path.join(dist, '.tsbuildinfo');
const { include, exclude = [] } = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));

function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
}

/** The source a file in dist/ came from: X.js and X.js.map from X.ts, X.json from X.json. */
function sourceOf(output) {
  const relative = path.relative(dist, output);
  if (relative.endsWith('.js.map')) return path.join(root, relative.slice(0, -'.js.map'.length) + '.ts');
  if (relative.endsWith('.js')) return path.join(root, relative.slice(0, -'.js'.length) + '.ts');
  if (relative.endsWith('.json')) return path.join(root, relative);
  return null;
}

let removed = 0;
for (const output of filesUnder(dist)) {
  if (output === buildInfo) continue;
  const source = sourceOf(output);
  if (source !== null && !existsSync(source)) {
    rmSync(output);
    removed++;
  }
}

const excluded = exclude.map((folder) => path.join(root, folder) + path.sep);
const missing = include
  .flatMap((folder) => filesUnder(path.join(root, folder)))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !excluded.some((folder) => file.startsWith(folder)))
  .filter((file) => !existsSync(path.join(dist, path.relative(root, file)).replace(/\.ts$/, '.js')));
if (missing.length > 0) rmSync(buildInfo, { force: true });
// A first build (no dist/ yet) is not worth a line.
if (existsSync(dist) && (removed > 0 || missing.length > 0))
  process.stderr.write(`svc build: removed ${removed} stale file(s) from dist/; ${missing.length} source(s) not built yet\n`);

/**
 * `npm run lint`: Biome checks the TypeScript (format and lint rules,
 * biome.json) and Ruff the Python (ruff.toml), from the tests' own Python
 * (test/python/env.ts), where test/python/requirements.txt pins Ruff. A
 * finding fails `npm test`; `npm run format` writes both formatters' fixes.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../core/model/paths.js';
import { ensureTestPython } from './python/env.js';

const write = process.argv.includes('--write');
const biome = path.join(packageRoot, 'node_modules', '.bin', 'biome');
const python = await ensureTestPython();

const steps: [string, string[]][] = write
  ? [
      [biome, ['check', '--write', '.']],
      [python, ['-m', 'ruff', 'check', '--fix', '.']],
      [python, ['-m', 'ruff', 'format', '.']],
    ]
  : [
      [biome, ['ci', '--error-on-warnings', '.']],
      [python, ['-m', 'ruff', 'check', '.']],
      [python, ['-m', 'ruff', 'format', '--check', '.']],
    ];

let failed = 0;
for (const [command, args] of steps) {
  const result = spawnSync(command, args, { cwd: packageRoot, stdio: 'inherit' });
  if (result.error) throw result.error;
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);

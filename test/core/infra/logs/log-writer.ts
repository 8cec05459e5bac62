/**
 * A process that writes deployment log lines under a logs dir, for the kill -9
 * test: `node log-writer.js <logs dir> <n>`. It adds `line 0` … `line <n-1>`,
 * waits until the batched flush (not close) has put them all in the file,
 * prints `{"flushed":<n>}`, then goes on adding lines until it is killed.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeploymentLogs } from '../../../../core/infra/logs/deployment-logs.js';

const [dir, count] = process.argv.slice(2) as [string, string];
const flushed = Number(count);
const key = { workspace: 'default', app: 'shop', stage: 'deployed', workload: 'api' };
// Bounds the test never reaches: every line written must come back.
const logs = new DeploymentLogs({
  dir,
  maxLines: 1_000_000,
  maxBytes: 1024 ** 3,
  report: (error) => {
    console.error(error);
    process.exit(2);
  },
});
await logs.restore();

let next = 0;
const add = () => logs.add(key, { time: new Date().toISOString(), container: 'c1', stream: 'stdout', text: `line ${next++}` });
while (next < flushed) add();

const file = path.join(dir, 'default', 'shop', 'api.jsonl');
const written = async () => (await readFile(file, 'utf8').catch(() => '')).split('\n').length - 1;
while ((await written()) < flushed) await sleep(10);
console.log(JSON.stringify({ flushed }));

// Killed long before this; the bound only keeps a forgotten writer from running on.
while (next < 100_000) {
  for (let i = 0; i < 50; i++) add();
  await sleep(1);
}
process.exit(0);

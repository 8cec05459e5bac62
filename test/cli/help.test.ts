/**
 * What `svc --help` and every `svc <command> --help` print, against the
 * golden file test/fixtures/cli/help.txt (SVC_UPDATE_GOLDEN=1 rewrites it;
 * then read the diff). The commands are the ones `svc --help` lists, so a
 * new command is compared too.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { prog } from '../../cli/program.js';
import { packageRoot } from '../../core/model/paths.js';

const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const golden = path.join(packageRoot, 'test', 'fixtures', 'cli', 'help.txt');

/** `svc <command> --help` as the process prints it. */
async function helpProcess(command: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, ...command.split(' ').filter(Boolean), '--help'], {
    encoding: 'utf8',
  });
  return `$ svc ${command}${command === '' ? '' : ' '}--help\n${stdout}`;
}

/**
 * The same text from the command tree in this process: what sade prints for `--help` (through
 * console.log). One node process per command cost 16 s of CPU; the test below checks, on real
 * processes, that the two agree.
 */
function help(command: string): string {
  // Once per command: sade adds its default options to the tree each time it renders one.
  const known = rendered.get(command);
  if (known !== undefined) return known;
  const printed: string[] = [];
  const log = console.log;
  console.log = (...parts: unknown[]) => void printed.push(`${parts.map(String).join(' ')}\n`);
  try {
    prog.help(command === '' ? undefined : command);
  } finally {
    console.log = log;
  }
  const text = `$ svc ${command}${command === '' ? '' : ' '}--help\n${printed.join('')}`;
  rendered.set(command, text);
  return text;
}
const rendered = new Map<string, string>();

/** The command names in the "Available Commands" section of `svc --help`. */
function commandsOf(rootHelp: string): string[] {
  const section = /Available Commands\n([\s\S]*?)\n\n/.exec(rootHelp)?.[1] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {4}(\S+(?: \S+)?)\s{2,}/.exec(line)?.[1] ?? '')
    .filter(Boolean);
}

describe('svc --help texts', function () {
  this.timeout(120_000);

  it('print exactly what the golden file says, for svc and every command, each with Examples', async () => {
    const root = help('');
    const commands = commandsOf(root);
    assert.ok(commands.length > 40 && commands.includes('jobs render'), `the commands read from svc --help: ${commands.join(', ')}`);
    const texts = [root, ...commands.map(help)];
    // Each command's help shows how to run it (the CLI's rule: every command has examples).
    for (const [i, command] of commands.entries()) {
      assert.match(texts[i + 1]!, /\n {2}Examples\n {4}\$ svc /, `svc ${command} --help has no Examples:\n${texts[i + 1]}`);
    }
    const text = texts.join('\n');
    if (process.env.SVC_UPDATE_GOLDEN === '1') writeFileSync(golden, text);
    assert.ok(existsSync(golden), 'test/fixtures/cli/help.txt is missing: run the test with SVC_UPDATE_GOLDEN=1');
    assert.equal(
      text,
      readFileSync(golden, 'utf8'),
      'svc --help texts differ from test/fixtures/cli/help.txt (SVC_UPDATE_GOLDEN=1 rewrites it; then read the diff)',
    );
  });

  it('are what the svc process prints: the root, a command, a subcommand and `run` (which the entry takes apart first)', async () => {
    for (const command of ['', 'deploy', 'app calls', 'run'])
      assert.equal(await helpProcess(command), help(command), `svc ${command} --help`);
  });
});

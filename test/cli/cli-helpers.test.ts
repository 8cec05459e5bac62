import assert from 'node:assert/strict';
import { parseEvent } from '../../cli/api-client.js';
import { parseDuration, parseIsoTime, parseSince } from '../../cli/durations.js';
import { parseAppTarget, parseDeploymentName, parseDeployTarget } from '../../cli/names.js';
import { splitRunArgs } from '../../cli/run-args.js';
import { formatTable, visibleLength } from '../../cli/table.js';
import { SvcError } from '../../core/model/errors.js';

const usageError = (error: unknown) => error instanceof SvcError && error.code === 'usage_invalid';

describe('cli durations', () => {
  it('reads 30s, 15m, 12h, 7d, 2w and sums such as 1h30m', () => {
    assert.equal(parseDuration('30s', '--x'), 30_000);
    assert.equal(parseDuration('15m', '--x'), 900_000);
    assert.equal(parseDuration('12h', '--x'), 43_200_000);
    assert.equal(parseDuration('7d', '--x'), 604_800_000);
    assert.equal(parseDuration('2w', '--x'), 1_209_600_000);
    assert.equal(parseDuration('1h30m', '--x'), 5_400_000);
  });

  it('refuses anything else with usage_invalid naming the option', () => {
    for (const bad of ['', '30', '30x', 'h', '1h 30m', '-5m', '0s']) {
      assert.throws(
        () => parseDuration(bad, '--expires-in'),
        (error: SvcError) => usageError(error) && error.message.includes('--expires-in'),
        bad,
      );
    }
  });

  it('--since takes a duration before now or an ISO time with its zone', () => {
    const now = Date.parse('2030-01-01T12:00:00Z');
    assert.equal(parseSince('10m', now).toISOString(), '2030-01-01T11:50:00.000Z');
    assert.equal(parseSince('2030-01-01T08:00:00Z', now).toISOString(), '2030-01-01T08:00:00.000Z');
    assert.equal(parseSince('2030-01-01T09:00:00+01:00', now).toISOString(), '2030-01-01T08:00:00.000Z');
    assert.throws(() => parseSince('yesterday', now), usageError);
    assert.equal(parseIsoTime('2030-01-01T08:00:00'), null, 'a time without its zone is ambiguous');
  });
});

describe('cli names', () => {
  it('names a deployment <app>/<workload> or <app>:<workload>', () => {
    assert.deepEqual(parseDeploymentName('quickstart/greet'), { app: 'quickstart', workload: 'greet' });
    assert.deepEqual(parseDeploymentName('quickstart:greet'), { app: 'quickstart', workload: 'greet' });
    for (const bad of ['quickstart', 'a/b/c', '/greet', 'quickstart/', 'a b/c'])
      assert.throws(() => parseDeploymentName(bad), usageError, bad);
  });

  it('svc logs takes <app> or <app>:<workload>', () => {
    assert.deepEqual(parseAppTarget('quickstart'), { app: 'quickstart', workload: null });
    assert.deepEqual(parseAppTarget('quickstart:hello'), { app: 'quickstart', workload: 'hello' });
    assert.throws(() => parseAppTarget('a:b:c'), usageError);
  });

  it('svc deploy takes a file or module, then optionally :<workload>', () => {
    assert.deepEqual(parseDeployTarget('examples/quickstart/app.py'), { target: 'examples/quickstart/app.py', workload: null });
    assert.deepEqual(parseDeployTarget('examples/quickstart/app.py:hello'), { target: 'examples/quickstart/app.py', workload: 'hello' });
    assert.deepEqual(parseDeployTarget('pkg.app:say_hello'), { target: 'pkg.app', workload: 'say_hello' });
    assert.deepEqual(parseDeployTarget('app'), { target: 'app', workload: null });
    assert.deepEqual(parseDeployTarget('C:/work/app.py'), { target: 'C:/work/app.py', workload: null });
  });
});

describe('svc run arguments', () => {
  it('passes everything after the target through untouched, flags and all', () => {
    assert.deepEqual(splitRunArgs(['run', 'app.py:greet', '--name', 'Ada', '--excited', 'true', '-v', '--help', '--', '12']), {
      target: 'app.py:greet',
      args: ['--name', 'Ada', '--excited', 'true', '-v', '--help', '--', '12'],
    });
    assert.deepEqual(splitRunArgs(['run', 'app:square', '007']), { target: 'app:square', args: ['007'] });
  });

  it('leaves other commands, a bare svc run and svc run --help to sade', () => {
    assert.equal(splitRunArgs(['deploy', 'app.py']), null);
    assert.equal(splitRunArgs(['run']), null);
    assert.equal(splitRunArgs(['run', '--help']), null);
    assert.equal(splitRunArgs([]), null);
  });
});

describe('cli tables', () => {
  it('aligns columns by their visible width, colour codes excluded, and never pads the last column', () => {
    const green = (s: string) => `\u001b[32m${s}\u001b[39m`;
    const lines = formatTable(
      ['NAME', 'STATUS', 'URL'],
      [
        ['a', green('running'), 'http://x/a'],
        ['longer-name', 'paused', 'http://x/longer-name'],
      ],
    );
    assert.deepEqual(
      lines.map((l) => l.replace(/\u001b\[\d+m/g, '')),
      ['NAME         STATUS   URL', 'a            running  http://x/a', 'longer-name  paused   http://x/longer-name'],
    );
    assert.equal(visibleLength(green('running')), 7);
  });
});

describe('Server-Sent Events parsing', () => {
  it('reads event and data fields, joins data lines, and skips comment-only blocks', () => {
    assert.deepEqual(parseEvent('event: log\ndata: {"a":1}'), { event: 'log', data: '{"a":1}' });
    assert.deepEqual(parseEvent('data: one\ndata: two'), { event: 'message', data: 'one\ntwo' });
    assert.equal(parseEvent(': ping'), null);
    assert.deepEqual(parseEvent(': following\nevent: end\ndata: {"reason":"deleted"}'), { event: 'end', data: '{"reason":"deleted"}' });
  });
});

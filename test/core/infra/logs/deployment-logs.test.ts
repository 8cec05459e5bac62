import assert from 'node:assert/strict';
import { DeploymentLogs, deploymentOfUnit, TRUNCATED_MARKER, type DeploymentLogLine } from '../../../../core/infra/logs/deployment-logs.js';

const key = { workspace: 'default', app: 'shop', stage: 'deployed', workload: 'api' };
const line = (unit: string, text: string) => ({
  unit,
  container: 'c1',
  stream: 'stdout' as const,
  text,
  time: new Date('2025-01-01T00:00:00Z'),
});

describe('DeploymentLogs', () => {
  it('maps unit keys of every version to one deployment', () => {
    assert.deepEqual(deploymentOfUnit('default/shop/deployed@7/api'), key);
    assert.deepEqual(deploymentOfUnit('default/shop/deployed/api'), key);
    assert.equal(deploymentOfUnit('not-a-unit'), null);
    const logs = new DeploymentLogs();
    logs.setVersion('default/shop/deployed@1/api', 1);
    logs.setVersion('default/shop/deployed@2/api', 2);
    logs.addUnitLine(line('default/shop/deployed@1/api', 'old'));
    logs.addUnitLine(line('default/shop/deployed@2/api', 'new'));
    logs.addUnitLine(line('default/other/deployed@3/api', 'elsewhere'));
    assert.deepEqual(logs.lines(key), [
      { time: '2025-01-01T00:00:00.000Z', container: 'c1', stream: 'stdout', text: 'old', version: 1 },
      { time: '2025-01-01T00:00:00.000Z', container: 'c1', stream: 'stdout', text: 'new', version: 2 },
    ]);
  });

  it('keeps the last maxLines lines', () => {
    const logs = new DeploymentLogs({ maxLines: 3 });
    for (let i = 0; i < 5000; i++) logs.addUnitLine(line('default/shop/deployed@1/api', `line ${i}`));
    assert.deepEqual(
      logs.lines(key).map((l) => l.text),
      ['line 4997', 'line 4998', 'line 4999'],
    );
  });

  it('keeps at most maxBytes of text, and cuts long lines with a marker', () => {
    const logs = new DeploymentLogs({ maxBytes: 100, maxLineBytes: 40 });
    for (let i = 0; i < 10; i++) logs.addUnitLine(line('default/shop/deployed@1/api', `${i}`.repeat(30)));
    const kept = logs.lines(key);
    assert.equal(kept.length, 3);
    assert.equal(kept.at(-1)!.text, '9'.repeat(30));
    logs.addUnitLine(line('default/shop/deployed@1/api', 'é'.repeat(100)));
    const cut = logs.lines(key).at(-1)!.text;
    assert.equal(cut, 'é'.repeat(20) + TRUNCATED_MARKER);
    assert.ok(logs.lines(key).reduce((n, l) => n + Buffer.byteLength(l.text), 0) <= 100);
  });

  it('tells subscribers each new line, then end when the deployment is forgotten; unsubscribe stops it', () => {
    const logs = new DeploymentLogs();
    const seen: (DeploymentLogLine | string)[] = [];
    const other: string[] = [];
    logs.subscribe(key, { line: (l) => seen.push(l), end: (reason) => seen.push(reason) });
    const unsubscribe = logs.subscribe(key, { line: (l) => other.push(l.text), end: () => other.push('end') });
    logs.addBuildLine(key, 'Collecting fastapi');
    unsubscribe();
    assert.equal(logs.subscriberCount(key), 1);
    logs.addUnitLine(line('default/shop/deployed@1/api', 'hello'));
    logs.forget(key);
    assert.deepEqual(
      seen.map((s) => (typeof s === 'string' ? s : `${s.container}:${s.text}`)),
      ['build:Collecting fastapi', 'c1:hello', 'deleted'],
    );
    assert.deepEqual(other, ['Collecting fastapi']);
    assert.deepEqual(logs.lines(key), []);
    assert.equal(logs.subscriberCount(key), 0);
  });
});

/**
 * The option rules exist twice: in the Python SDK (sdk/python/svc/_options.py),
 * which checks decorator options and writes the manifest, and in the platform
 * (core/workload/rules.ts and defaults.ts), which validates it. This test runs
 * the real SDK, dumps its table with `svc._options.describe_options()`, and
 * checks that both sides know the same options per kind, with the same
 * defaults and bounds, and accept the same values.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { validateOptions } from '../../../core/manifest/validate-options.js';
import { sdkPythonPath } from '../../../core/paths.js';
import { optionDefaults } from '../../../core/workload/defaults.js';
import { IssueCollector } from '../../../core/workload/issues.js';
import {
  autoscalerRules,
  httpMethods,
  memoryRule,
  optionsByKind,
  optionTable,
  reservedRoutePrefix,
  workloadKinds,
  type AutoscalerKey,
  type OptionName,
} from '../../../core/workload/rules.js';
import type { WorkloadKind } from '../../../core/workload/types.js';

type Described = Record<string, unknown>;
type Table = Record<string, Record<string, Described>>;

const SDK = 'the SDK (sdk/python/svc/_options.py)';
const PLATFORM = 'the platform (core/workload/rules.ts, defaults.ts)';

/** Prints the SDK's table, and for each probed value whether the SDK would write it as it is. */
const pythonScript = `
import json, sys
from svc import Autoscaler
from svc._checks import Problem
from svc._options import OPTIONS, describe_options, manifest_value
from svc.exceptions import InvalidOptionError

def given(option, value):
    """What a user would pass for this manifest value: on_start's name names a function."""
    if option != "on_start" or value is None:
        return value
    def target():
        pass
    target.__qualname__ = value  # TypeError unless a str
    return target

def writes_as_is(option, value):
    try:
        if option == "autoscaler":
            kept = Autoscaler(**value).to_dict()
        else:
            kept = manifest_value(option, OPTIONS[option].check(given(option, value)))
    except (Problem, InvalidOptionError, TypeError):
        return False
    return kept == value

probes = json.load(sys.stdin)
print(json.dumps({
    "options": describe_options(),
    "writes": {option: [writes_as_is(option, value) for value in values] for option, values in probes.items()},
}))
`;

/** The platform's rules in the shape `describe_options()` uses. */
function platformTable(): Table {
  const defaults = optionDefaults as Record<string, unknown>;
  const describe = (name: OptionName): Described => {
    const { rule } = optionTable[name];
    const base = { default: defaults[name], type: rule.type };
    switch (rule.type) {
      case 'number':
      case 'integer':
        return { ...base, min: rule.min, max: rule.max };
      case 'memory':
        return { ...base, min_mib: memoryRule.minMiB, max_mib: memoryRule.maxMiB };
      case 'methods':
        return { ...base, allowed: [...httpMethods] };
      case 'route':
        return { ...base, reserved_prefix: reservedRoutePrefix };
      case 'domain':
      case 'callable':
        return { ...base, nullable: true };
      case 'boolean':
        return base;
      case 'autoscaler': {
        const fields = Object.fromEntries(
          (Object.keys(autoscalerRules) as AutoscalerKey[]).map((key) => [
            key,
            { default: optionDefaults.autoscaler[key], type: 'integer', ...autoscalerRules[key] },
          ]),
        );
        return { ...base, fields };
      }
    }
  };
  return Object.fromEntries(workloadKinds.map((kind) => [kind, Object.fromEntries(optionsByKind[kind].map((name) => [name, describe(name)]))]));
}

/** Every difference between two rules, one line each, naming the option and both values. */
function differences(where: string, sdk: Described, platform: Described): string[] {
  const keys = [...new Set([...Object.keys(sdk), ...Object.keys(platform)])];
  return keys.flatMap((key) => {
    const [ours, theirs] = [sdk[key], platform[key]];
    if (key === 'fields' && isPlain(ours) && isPlain(theirs)) {
      const names = [...new Set([...Object.keys(ours), ...Object.keys(theirs)])];
      return names.flatMap((name) => differences(`${where}.${name}`, asDescribed(ours[name]), asDescribed(theirs[name])));
    }
    if (isDeepStrictEqual(ours, theirs)) return [];
    return [`${where}: ${key} differs: ${SDK} says ${show(ours)}, ${PLATFORM} says ${show(theirs)}`];
  });
}

function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asDescribed(value: unknown): Described {
  return isPlain(value) ? value : { missing: true };
}

function show(value: unknown): string {
  return value === undefined ? '(nothing)' : JSON.stringify(value);
}

/** Values on and around every rule's edges: the two sides must agree on each. */
function probesFor(name: OptionName): unknown[] {
  const { rule } = optionTable[name];
  const wrongTypes = [true, '1', null, [], {}];
  switch (rule.type) {
    case 'number':
      return [rule.min, rule.max, rule.min - 0.001, rule.max + 0.001, (rule.min + rule.max) / 2, 0, -1, ...wrongTypes];
    case 'integer':
      return [rule.min, rule.max, rule.min - 1, rule.max + 1, rule.min + 0.5, ...wrongTypes];
    case 'boolean':
      return [true, false, 0, 1, 'true', null];
    case 'memory':
      return ['64Mi', '63Mi', '256Gi', '257Gi', '262144Mi', '262145Mi', '1Gi', '1536Mi', '0Gi', '0512Mi', '512MB', '512mi', '1.5Gi', '512', ' 512Mi', 512, null];
    case 'route':
      return [
        '/', '/greet', '/api/', 'greet', '', '/a?b=1', '/a#b', '/a b', '/a\tb', '//a', '/a//b', '/./a', '/a/..', '/a/../b', '/a..b',
        reservedRoutePrefix, `${reservedRoutePrefix}/health`, `${reservedRoutePrefix}x`, '/café', '/a%20b', '/a/{id}', '/a<b>',
        "/v1/items:batch/~a-b_c.d/@x/$!&'()*+,;=", 5, null,
      ];
    case 'methods':
      return [['GET'], ['GET', 'POST'], [...httpMethods], [], ['get'], ['FETCH'], ['GET', 'GET'], 'GET', [1], null];
    case 'domain':
      return [
        null, 'api.example.com', 'a.b', '1-2.x9.io', 'localhost', 'API.example.com', '-a.com', 'a-.com', 'a..com', 'a.com.',
        `${'a'.repeat(63)}.com`, `${'a'.repeat(64)}.com`, `${'a.'.repeat(126)}a`, `${'a.'.repeat(127)}aa`, 'a_b.com',
        'api.example.com:8080', 'https://api.example.com', '', 5,
      ];
    case 'autoscaler': {
      const base = { max_containers: 1, tasks_per_container: 1, min_containers: 0 };
      const edges = (Object.keys(autoscalerRules) as AutoscalerKey[]).flatMap((key) => {
        const { min, max } = autoscalerRules[key];
        return [min - 1, min, max, max + 1].map((value) => ({ ...base, max_containers: 1000, [key]: value }));
      });
      return [
        base, ...edges,
        { ...base, min_containers: 2, max_containers: 1 },
        { ...base, min_containers: 3, max_containers: 3 },
        { ...base, tasks_per_container: 1.5 },
        { max_containers: 1 },
        { ...base, extra: 1 },
        null, 3,
      ];
    }
    case 'callable':
      return [null, 'load', 'Model.load', 'make.<locals>.load', '<lambda>', '', 5, true, [], {}];
  }
}

/** Whether the platform's validator accepts `value` as option `name` of `kind` (every other option at its default). */
function platformAccepts(kind: WorkloadKind, name: OptionName, value: unknown): boolean {
  const options = Object.fromEntries(optionsByKind[kind].map((option) => [option, (optionDefaults as Record<string, unknown>)[option]]));
  options[name] = value;
  const issues = IssueCollector.root();
  validateOptions(kind, options, issues);
  return issues.count === 0;
}

describe('option rules: SDK and platform agree', function () {
  let sdk: { options: Table; writes: Record<string, boolean[]> };
  const optionNames = Object.keys(optionTable) as OptionName[];
  const probes = Object.fromEntries(optionNames.map((name) => [name, probesFor(name)]));

  before(function () {
    this.timeout(30_000);
    const output = execFileSync(process.env.SVC_PYTHON ?? 'python3', ['-c', pythonScript], {
      input: JSON.stringify(probes),
      env: { ...process.env, PYTHONPATH: sdkPythonPath, PYTHONDONTWRITEBYTECODE: '1' },
      encoding: 'utf8',
    });
    sdk = JSON.parse(output);
  });

  it('on the kinds and the options of each kind, in manifest order', () => {
    assert.deepEqual(Object.keys(sdk.options), [...workloadKinds], `kinds: ${SDK} vs ${PLATFORM}`);
    for (const kind of workloadKinds) {
      assert.deepEqual(Object.keys(sdk.options[kind] ?? {}), [...optionsByKind[kind]], `options of ${kind}: ${SDK} vs ${PLATFORM}`);
    }
  });

  it('on the default, type and bounds of every option of every kind', () => {
    const platform = platformTable();
    const found = workloadKinds.flatMap((kind) =>
      optionsByKind[kind].flatMap((name) =>
        differences(`${kind} option ${name}`, asDescribed(sdk.options[kind]?.[name]), platform[kind]?.[name] ?? {}),
      ),
    );
    assert.deepEqual(found, [], `the option rules differ:\n  - ${found.join('\n  - ')}`);
  });

  it('on which values are valid: the SDK writes a value as it is exactly when the platform accepts it', () => {
    const found: string[] = [];
    for (const kind of workloadKinds) {
      for (const name of optionsByKind[kind]) {
        (probes[name] ?? []).forEach((value, index) => {
          const writes = sdk.writes[name]?.[index];
          const accepts = platformAccepts(kind, name, value);
          if (writes !== accepts) {
            found.push(`${kind} option ${name} = ${JSON.stringify(value)}: ${SDK} ${writes ? 'writes it' : 'refuses it'}, ${PLATFORM} ${accepts ? 'accepts it' : 'refuses it'}`);
          }
        });
      }
    }
    assert.deepEqual(found, [], `the option checks disagree:\n  - ${found.join('\n  - ')}`);
  });

  it('reports a difference naming the option and both values', () => {
    const message = differences('endpoint option workers', { default: 1, type: 'integer', min: 1, max: 64 }, { default: 1, type: 'integer', min: 1, max: 32 });
    assert.deepEqual(message, [`endpoint option workers: max differs: ${SDK} says 64, ${PLATFORM} says 32`]);
  });
});

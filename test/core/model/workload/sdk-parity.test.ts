/**
 * The option rules exist twice: in the Python SDK (sdk/python/svc/_options.py),
 * which checks decorator options and writes the manifest, and in the platform
 * (core/model/workload/rules.ts and defaults.ts), which validates it. This test runs
 * the real SDK, dumps its table with `svc._options.describe_options()`, and
 * checks that both sides know the same options per kind, with the same
 * defaults and bounds, and accept the same values. It does the same for the
 * name rule of apps and workloads (the SDK's sdk/python/svc/_checks.py against
 * the platform's one rule, core/model/names.ts, which the manifest
 * validator uses): the same rule, the same sample names accepted and refused,
 * and the same workload name made from a Python function's name.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { validateManifest, validateOptions } from '../../../../core/model/workload/manifest/parse.js';
import { sdkPythonPath } from '../../../../core/model/paths.js';
import { optionDefaults } from '../../../../core/model/workload/defaults.js';
import {
  autoscalerRules,
  httpMethods,
  memoryRule,
  optionsByKind,
  optionTable,
  reservedRoutePrefix,
  retriesRules,
  workloadKinds,
  type AutoscalerKey,
  type RetriesKey,
  type OptionName,
} from '../../../../core/model/workload/rules.js';
import type { WorkloadKind } from '../../../../core/model/workload/types.js';
import { NAME_MAX_LENGTH, NAME_RULE, nameProblem, suggestName } from '../../../../core/model/names.js';
import { sampleManifest } from './manifest/sample-manifest.js';
import { MAX_CALLBACK_URL_LENGTH } from '../../../../core/model/callback-url.js';
import { gpuRules } from '../../../../core/model/gpus/gpu-request.js';

type Described = Record<string, unknown>;
type Table = Record<string, Record<string, Described>>;

const SDK = 'the SDK (sdk/python/svc/_options.py)';
const PLATFORM = 'the platform (core/model/workload/rules.ts, defaults.ts)';

/** Prints the SDK's table, and for each probed value whether the SDK would write it as it is. */
const pythonScript = `
import json, sys
import svc
from svc import Autoscaler, Retries
from svc._checks import Problem, name as check_name, rule_of
from svc._options import OPTIONS, describe_options, manifest_value
from svc.exceptions import InvalidOptionError

def given(option, value):
    """What a user would pass for this manifest value: on_start's name names a function, a schedule is a svc.Cron or svc.Period, cors a svc.Cors, gpu its strings."""
    if option == "gpu" and isinstance(value, dict) and isinstance(value.get("models"), list):
        return [f"{model}:{value.get('count')}" if isinstance(model, str) else model for model in value["models"]]
    if option == "cors" and isinstance(value, dict):
        return svc.Cors(**value)
    if option == "schedule" and isinstance(value, dict):
        if "every" in value:
            return svc.Period(seconds=value["every"], overlap=value["overlap"])
        return svc.Cron(value["cron"], timezone=value["timezone"], overlap=value["overlap"])
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
        elif option == "retries" and isinstance(value, dict):
            kept = Retries(**value).to_dict()
        else:
            kept = manifest_value(option, OPTIONS[option].check(given(option, value)))
    except (Problem, InvalidOptionError, TypeError, KeyError):
        return False
    return kept == value

def accepts(declare):
    try:
        declare()
    except InvalidOptionError:
        return False
    return True

def workload_name_of(python_name):
    """The workload name the SDK gives a function called python_name, or None when it asks for name=."""
    def target():
        pass
    target.__name__ = python_name
    try:
        return svc.App("parity").function(target).workload.name
    except InvalidOptionError:
        return None

given_in = json.load(sys.stdin)
probes = given_in["options"]
print(json.dumps({
    "options": describe_options(),
    "writes": {option: [writes_as_is(option, value) for value in values] for option, values in probes.items()},
    "name_rule": rule_of(check_name),
    "names": [
        {"app": accepts(lambda: svc.App(name)), "workload": accepts(lambda: svc.App("parity").function(name=name)(lambda: None))}
        for name in given_in["names"]
    ],
    "derived": [workload_name_of(python_name) for python_name in given_in["python_names"]],
}))
`;

/** Names on and around every edge of the name rule, for apps and workloads. */
const nameProbes: unknown[] = [
  'greet',
  'say-hello',
  'a',
  '0',
  '9lives',
  'v2-api',
  'a-b-c-d',
  'x'.repeat(63),
  'api',
  'preview',
  'dashboard',
  '',
  'x'.repeat(64),
  'say_hello',
  'Greet',
  'GREET',
  'sayHello',
  '-greet',
  'greet-',
  '-',
  'say--hello',
  'a.b',
  'a b',
  ' a',
  'a\n',
  'grüße',
  'é',
  'ａ',
  '\u212a',
  '_private',
  5,
  null,
  true,
  [],
  {},
];

/** Python function names: the SDK names a workload after one of these exactly as the platform's suggestName does. */
const pythonNameProbes = [
  'greet',
  'say_hello',
  '_private_fn',
  '__dunder__',
  'Greet',
  'SayHello',
  'say__hello',
  'v2_api_',
  'x'.repeat(63),
  `${'x'.repeat(63)}_`,
  '_',
  '__',
  '<lambda>',
  'grüße',
  'x'.repeat(64),
  '\u212a',
  'İstanbul',
  'ÀB',
  'a1_2B',
];

/** The platform's name rule in the shape the SDK's `rule_of(svc._checks.name)` uses. */
const platformNameRule = { type: 'name', max_length: NAME_MAX_LENGTH, rule: NAME_RULE };

/** Whether the platform's manifest validator accepts `name` as the app's and as a workload's name. */
function platformAcceptsName(name: unknown): { app: boolean; workload: boolean } {
  const manifest = sampleManifest() as any;
  manifest.app.name = name;
  manifest.workloads[0].name = name;
  const paths = new Set(validateManifest(manifest).map((issue) => issue.path));
  return { app: !paths.has('app.name'), workload: !paths.has('workloads[0].name') };
}

/** The workload name the platform's rule makes of a Python name, or null when none is valid. */
function platformDerives(pythonName: string): string | null {
  const derived = suggestName(pythonName);
  return nameProblem(derived, 'workload') === null ? derived : null;
}

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
      case 'gpu':
        return { ...base, nullable: true, max_count: gpuRules.maxCount, max_models: gpuRules.maxModels };
      case 'methods':
        return { ...base, allowed: [...httpMethods] };
      case 'route':
        return { ...base, reserved_prefix: reservedRoutePrefix };
      case 'openapi':
        return { ...base, reserved_prefix: reservedRoutePrefix, nullable: true };
      case 'domain':
      case 'callable':
      case 'schedule':
        return { ...base, nullable: true };
      case 'callbackUrl':
        return { ...base, nullable: true, max_length: MAX_CALLBACK_URL_LENGTH };
      case 'cors':
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
      case 'retries': {
        // The SDK's svc.Retries defaults; max_retries has none (it is the count itself).
        const sdkDefaults: Record<RetriesKey, number | null> = {
          max_retries: null,
          backoff_coefficient: 2,
          initial_delay: 1,
          max_delay: 60,
        };
        const fields = Object.fromEntries(
          (Object.keys(retriesRules) as RetriesKey[]).map((key) => {
            const { integer, min, max } = retriesRules[key];
            return [key, { default: sdkDefaults[key], type: integer ? 'integer' : 'number', min, max }];
          }),
        );
        return { ...base, nullable: true, fields };
      }
    }
  };
  return Object.fromEntries(
    workloadKinds.map((kind) => [kind, Object.fromEntries(optionsByKind[kind].map((name) => [name, describe(name)]))]),
  );
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
      return [
        '64Mi',
        '63Mi',
        '256Gi',
        '257Gi',
        '262144Mi',
        '262145Mi',
        '1Gi',
        '1536Mi',
        '0Gi',
        '0512Mi',
        '512MB',
        '512mi',
        '1.5Gi',
        '512',
        ' 512Mi',
        512,
        null,
      ];
    case 'route':
      return [
        '/',
        '/greet',
        '/api/',
        'greet',
        '',
        '/a?b=1',
        '/a#b',
        '/a b',
        '/a\tb',
        '//a',
        '/a//b',
        '/./a',
        '/a/..',
        '/a/../b',
        '/a..b',
        reservedRoutePrefix,
        `${reservedRoutePrefix}/health`,
        `${reservedRoutePrefix}x`,
        '/café',
        '/a%20b',
        '/a/{id}',
        '/a<b>',
        "/v1/items:batch/~a-b_c.d/@x/$!&'()*+,;=",
        5,
        null,
      ];
    case 'openapi':
      return [
        null,
        '/openapi.json',
        '/api/v1/openapi.json',
        '/',
        'openapi.json',
        '',
        '/a?b',
        '/a b',
        '//a',
        '/./a',
        `${reservedRoutePrefix}/openapi.json`,
        '/café',
        5,
        true,
        [],
      ];
    case 'gpu': {
      const gpu = (models: unknown, count: unknown = 1) => ({ models, count });
      return [
        null,
        gpu(['H100']),
        gpu(['A100-80GB'], 2),
        gpu(['H100', 'A100', 'any'], 8),
        gpu(['any'], 2),
        gpu(['RTX-4090']),
        gpu(['L40S', 'L4']),
        gpu(['X'.repeat(40)]),
        gpu(['X'.repeat(41)]),
        gpu(['H100'], 0),
        gpu(['H100'], 9),
        gpu(['H100'], 1.5),
        gpu(['H100'], '2'),
        gpu([]),
        gpu(Array.from({ length: 9 }, (_, i) => `M${i}`)),
        gpu(Array.from({ length: 8 }, (_, i) => `M${i}`)),
        gpu(['h100']),
        gpu(['NVIDIA-H100']),
        gpu(['A100-80G']),
        gpu(['RTX4090']),
        gpu(['80GB']),
        gpu(['ANY']),
        gpu(['any', 'H100']),
        gpu(['H100', 'H100']),
        gpu(['H100 80GB']),
        gpu(['H100!']),
        gpu([5]),
        gpu('H100'),
        { models: ['H100'] },
        { models: ['H100'], count: 1, extra: 1 },
        'H100',
        ['H100'],
        5,
        true,
      ];
    }
    case 'methods':
      return [['GET'], ['GET', 'POST'], [...httpMethods], [], ['get'], ['FETCH'], ['GET', 'GET'], 'GET', [1], null];
    case 'domain':
      return [
        null,
        'api.example.com',
        'a.b',
        '1-2.x9.io',
        'localhost',
        'API.example.com',
        '-a.com',
        'a-.com',
        'a..com',
        'a.com.',
        `${'a'.repeat(63)}.com`,
        `${'a'.repeat(64)}.com`,
        `${'a.'.repeat(126)}a`,
        `${'a.'.repeat(127)}aa`,
        'a_b.com',
        'api.example.com:8080',
        'https://api.example.com',
        '',
        5,
      ];
    case 'autoscaler': {
      const base = { max_containers: 1, tasks_per_container: 1, min_containers: 0 };
      const edges = (Object.keys(autoscalerRules) as AutoscalerKey[]).flatMap((key) => {
        const { min, max } = autoscalerRules[key];
        return [min - 1, min, max, max + 1].map((value) => ({ ...base, max_containers: 1000, [key]: value }));
      });
      return [
        base,
        ...edges,
        { ...base, min_containers: 2, max_containers: 1 },
        { ...base, min_containers: 3, max_containers: 3 },
        { ...base, tasks_per_container: 1.5 },
        { max_containers: 1 },
        { ...base, extra: 1 },
        null,
        3,
      ];
    }
    case 'callbackUrl': {
      const long = (length: number) => `https://example.com/${'x'.repeat(length - 'https://example.com/'.length)}`;
      return [
        null,
        'https://example.com/hooks/svc',
        'http://example.com',
        'HTTPS://Example.COM:8443/a?b=1#c',
        'https://203.0.113.7/hooks',
        'http://[2001:db8::1]:8080/hooks',
        'http://127.0.0.1:9/hooks', // where it points is checked when a call is made, not here
        'https://example.com/?next=a@b',
        'https://example.com/a:b@c',
        long(MAX_CALLBACK_URL_LENGTH),
        long(MAX_CALLBACK_URL_LENGTH + 1),
        'https://user:pass@example.com/hooks',
        'https://token@example.com/',
        'https://@example.com/',
        'ftp://example.com/hooks',
        'mailto:ops@example.com',
        'example.com/hooks',
        '/hooks/svc',
        'https://',
        'https:///hooks',
        'http:example.com',
        'http:/example.com',
        'https://example.com:99999/',
        'https://example.com:port/',
        'https://exa mple.com/',
        'https://example.com/a b',
        ' https://example.com/',
        'https://example.com/\n',
        'https://example.com/\t',
        '',
        5,
        true,
        [],
        {},
      ];
    }
    case 'callable':
      return [null, 'load', 'Model.load', 'make.<locals>.load', '<lambda>', '', 5, true, [], {}];
    case 'cors': {
      const base = {
        origins: ['https://app.example.com'],
        methods: null,
        headers: ['authorization', 'content-type'],
        credentials: false,
        max_age: 600,
      };
      return [
        null,
        base,
        { ...base, origins: ['*'] },
        { ...base, origins: ['http://localhost:8080', 'https://a.example', 'http://[::1]:3000', 'http://x_y.test'] },
        { ...base, methods: ['GET', 'POST'] },
        { ...base, headers: [] },
        { ...base, headers: ['x-api-key'] },
        { ...base, credentials: true },
        { ...base, max_age: 0 },
        { ...base, max_age: 86_400 },
        { ...base, max_age: 86_401 },
        { ...base, max_age: -1 },
        { ...base, origins: ['*'], credentials: true },
        { ...base, origins: [] },
        { ...base, origins: ['https://a.example/path'] },
        { ...base, origins: ['https://a.example/'] },
        { ...base, origins: ['https://A.example'] },
        { ...base, origins: ['https://a.example:443'] },
        { ...base, origins: ['ftp://a.example'] },
        { ...base, origins: ['a.example'] },
        { ...base, origins: ['https://a.example?x=1'] },
        { ...base, origins: ['https://a b.example'] },
        { ...base, origins: 'https://a.example' },
        { ...base, methods: [] },
        { ...base, methods: ['get'] },
        { ...base, methods: ['GET', 'GET'] },
        { ...base, methods: ['FETCH'] },
        { ...base, headers: ['bad header'] },
        { ...base, headers: ['X-Api-Key'] },
        { ...base, extra: 1 },
        { origins: ['https://a.example'] },
        'https://a.example',
        5,
        [],
      ];
    }
    case 'schedule': {
      const cron = (expression: string, timezone = 'UTC') => ({ cron: expression, timezone, overlap: false });
      return [
        null,
        cron('0 3 * * *'),
        { ...cron('*/15 9-17 * * mon-fri', 'Europe/Paris'), overlap: true },
        cron('0,30 0 1,15 jan-jun sun'),
        cron('59 23 31 12 7'),
        cron('0 3 * *'),
        cron('0 0 3 * * *'),
        cron(''),
        cron('61 * * * *'),
        cron('0 24 * * *'),
        cron('0 3 0 * *'),
        cron('0 3 32 * *'),
        cron('0 3 * 13 *'),
        cron('0 3 * * 8'),
        cron('0 3 * * x'),
        cron('0 3 * mon *'),
        cron('*/0 * * * *'),
        cron('0 3 * * *', 'Mars/Base'),
        cron('0 3 * * *', ''),
        { every: 1, overlap: false },
        { every: 300, overlap: true },
        { every: 366 * 86_400, overlap: false },
        { every: 0, overlap: false },
        { every: 366 * 86_400 + 1, overlap: false },
        { every: 1.5, overlap: false },
        { every: 5 },
        { ...cron('0 3 * * *'), extra: 1 },
        { cron: '0 3 * * *', overlap: false },
        '0 3 * * *',
        5,
        true,
        [],
      ];
    }
    case 'retries': {
      const base = { max_retries: 3, backoff_coefficient: 2, initial_delay: 1, max_delay: 60 };
      const edges = (Object.keys(retriesRules) as RetriesKey[]).flatMap((key) => {
        const { min, max, integer } = retriesRules[key];
        return [min - (integer ? 1 : 0.001), min, max, max + (integer ? 1 : 0.001)].map((value) => ({ ...base, [key]: value }));
      });
      return [
        null,
        base,
        ...edges,
        { ...base, max_retries: 1.5 },
        { max_retries: 1 },
        { ...base, extra: 1 },
        { ...base, initial_delay: '1' },
        3,
        true,
        [],
      ];
    }
  }
}

/** Whether the platform's validator accepts `value` as option `name` of `kind` (every other option at its default). */
function platformAccepts(kind: WorkloadKind, name: OptionName, value: unknown): boolean {
  const options = Object.fromEntries(optionsByKind[kind].map((option) => [option, (optionDefaults as Record<string, unknown>)[option]]));
  options[name] = value;
  return validateOptions(kind, options).length === 0;
}

describe('option rules: SDK and platform agree', () => {
  let sdk: {
    options: Table;
    writes: Record<string, boolean[]>;
    name_rule: Described;
    names: { app: boolean; workload: boolean }[];
    derived: (string | null)[];
  };
  const optionNames = Object.keys(optionTable) as OptionName[];
  const probes = Object.fromEntries(optionNames.map((name) => [name, probesFor(name)]));

  before(function () {
    this.timeout(30_000);
    const output = execFileSync(process.env.SVC_PYTHON ?? 'python3', ['-c', pythonScript], {
      input: JSON.stringify({ options: probes, names: nameProbes, python_names: pythonNameProbes }),
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
            found.push(
              `${kind} option ${name} = ${JSON.stringify(value)}: ${SDK} ${writes ? 'writes it' : 'refuses it'}, ${PLATFORM} ${accepts ? 'accepts it' : 'refuses it'}`,
            );
          }
        });
      }
    }
    assert.deepEqual(found, [], `the option checks disagree:\n  - ${found.join('\n  - ')}`);
  });

  it('on the name rule of apps and workloads', () => {
    const found = differences('name rule', sdk.name_rule, platformNameRule);
    assert.deepEqual(found, [], `the name rules differ:\n  - ${found.join('\n  - ')}`);
  });

  it('on which app and workload names are valid', () => {
    const found: string[] = [];
    nameProbes.forEach((name, index) => {
      const ours = sdk.names[index];
      const theirs = platformAcceptsName(name);
      for (const what of ['app', 'workload'] as const) {
        if (ours?.[what] !== theirs[what]) {
          found.push(
            `${what} name ${JSON.stringify(name)}: ${SDK} ${ours?.[what] ? 'accepts it' : 'refuses it'}, the platform (core/model/names.ts) ${theirs[what] ? 'accepts it' : 'refuses it'}`,
          );
        }
      }
    });
    assert.deepEqual(found, [], `the name checks disagree:\n  - ${found.join('\n  - ')}`);
    // The probes cover both answers, for both apps and workloads.
    assert.ok(sdk.names.some((n) => n.app && n.workload) && sdk.names.some((n) => !n.app && !n.workload));
  });

  it('on the workload name made from a Python function name', () => {
    const found = pythonNameProbes.flatMap((pythonName, index) => {
      const [ours, theirs] = [sdk.derived[index], platformDerives(pythonName)];
      return ours === theirs
        ? []
        : [`${JSON.stringify(pythonName)}: ${SDK} makes ${JSON.stringify(ours)}, suggestName makes ${JSON.stringify(theirs)}`];
    });
    assert.deepEqual(found, [], `the derived names differ:\n  - ${found.join('\n  - ')}`);
    assert.equal(sdk.derived[pythonNameProbes.indexOf('say_hello')], 'say-hello');
    assert.equal(sdk.derived[pythonNameProbes.indexOf('<lambda>')], null);
  });

  it('reports a difference naming the option and both values', () => {
    const message = differences(
      'endpoint option workers',
      { default: 1, type: 'integer', min: 1, max: 64 },
      { default: 1, type: 'integer', min: 1, max: 32 },
    );
    assert.deepEqual(message, [`endpoint option workers: max differs: ${SDK} says 64, ${PLATFORM} says 32`]);
  });
});

/**
 * The typed clients type-check and keep their word: the exports of every
 * example app and of the all-kinds app (test/fixtures/apps/all_kinds.py: every
 * kind of workload, every return shape) pass `mypy --strict` and `pyright`
 * in strict mode, SDK included, as a user's CI would run them on a project
 * that checks its client in; and the all-kinds client, imported by a fresh
 * Python in another folder, answers each call with the type it declares.
 *
 * The same two runs check what the Python exporter's unit tests make: its runtime as it is in
 * the repository (plugins/export-python/runtime, checked in place) and the clients exported from
 * the recorded interfaces (kitchen-sink: every kind and return shape; todos: the ASGI operations
 * of operations-app.ts). Each checker runs once over all of them: a cold run spends most of its
 * time on the standard library and the SDK, which every target shares.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import appExport from '../../cli/commands/app-export.js';
import type { AppInterface } from '../../core/infra/plugin/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { examplesRoot, packageRoot, sdkPythonPath } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture } from '../cli/fixture.js';
import { fillLexiconsVolume } from './example-volumes.js';
import { tempDir, testConfig } from '../helpers/config.js';
import {
  bareInterpreter,
  CLIENT_MYPY_CONFIG,
  CLIENT_MYPYPATH,
  printed,
  pythonPath,
  pythonWithWebsockets,
  runPyright,
  runPython,
  writeClientPyrightConfig,
  writeFiles,
} from '../plugins/export-python/python-helpers.js';
import { OPERATIONS_APP } from '../plugins/export-python/operations-app.js';
import { pythonExporter } from '../../plugins/export-python/index.js';
import { RUNTIME_FILES } from '../../plugins/export-python/runtime-files.js';

const EXAMPLES = readdirSync(examplesRoot)
  .filter((name) => existsSync(path.join(examplesRoot, name, 'app.py')))
  .sort();
const ALL_KINDS = path.join(packageRoot, 'test', 'fixtures', 'apps', 'all_kinds.py');
const TARGETS = [...EXAMPLES.map((name) => path.join(examplesRoot, name, 'app.py')), ALL_KINDS];
const exporterPlugin = path.join(packageRoot, 'plugins', 'export-python');
const exporterRuntime = path.join(exporterPlugin, 'runtime');
/** Clients exported from recorded interfaces (no deploy): kitchen-sink and the ASGI operations app. */
const RECORDED = (): AppInterface[] => [
  JSON.parse(readFileSync(path.join(packageRoot, 'test', 'fixtures', 'export', 'kitchen-sink.interface.json'), 'utf8')),
  OPERATIONS_APP,
];

describe('exported clients pass mypy --strict and pyright --strict, and answer with the types they declare', function () {
  this.timeout(600_000);
  let platform: Platform;
  const out = tempDir('svc-export-types-');
  const elsewhere = tempDir('svc-export-types-elsewhere-');
  const clientEnv = () => ({
    PYTHONPATH: pythonPath(out),
    SVC_SERVER: platform.url,
    SVC_TOKEN: platform.ownerToken.secret,
    SVC_CONFIG_DIR: tempDir('svc-config-'),
  });

  // The checks see the packages of a project that installed svc and nothing else (no websockets, no pydantic).
  let bare: string;

  before(async () => {
    bare = bareInterpreter();
    platform = await startPlatform({ config: testConfig(), report: () => {} });
    // The model-class example's workers load their lexicon from a volume at start-up: it must hold them.
    await fillLexiconsVolume(platform.url, platform.ownerToken.secret);
    for (const target of TARGETS) {
      const manifest = await loadManifest({ target });
      await platform.deployments.deploy({
        spec: manifest.spec,
        source: { root: manifest.root, entry: manifest.spec.entry },
        workspace: DEFAULT_WORKSPACE,
        stage: 'deployed',
        principal: null,
      });
      await appExport(
        capture({ env: { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret }, cwd: out }).context,
        manifest.spec.name,
        { out },
      );
    }
    for (const app of RECORDED()) writeFiles(out, pythonExporter.export(app, {}));
  });
  after(async () => platform?.close());

  it(`mypy --strict finds nothing in the clients of ${EXAMPLES.join(', ')}, all-kinds, kitchen-sink and todos, nor in the exporter's runtime (checked in place, as the namespace package runtime), nor in the SDK they import`, async () => {
    const clientNames = readdirSync(path.join(out, 'svc_clients')).filter((name) => name !== '__init__.py');
    assert.equal(clientNames.length, TARGETS.length + RECORDED().length, clientNames.join(', '));
    writeFileSync(path.join(out, 'mypy.ini'), CLIENT_MYPY_CONFIG);
    const args = [
      '--config-file',
      'mypy.ini',
      '--cache-dir',
      '.mypy_cache',
      '--python-executable',
      bare,
      '-p',
      'svc_clients',
      '-p',
      'runtime',
    ];
    const checked = await runPython(
      `import sys\nfrom mypy import api\nout, err, code = api.run(${JSON.stringify(args)})\nprint(out, err)\nsys.exit(code)`,
      {
        cwd: out,
        // The runtime's folder on MYPYPATH: `-p runtime` finds it in place; the clients are in the working folder.
        env: { MYPYPATH: [CLIENT_MYPYPATH, exporterPlugin].join(path.delimiter) },
      },
    );
    assert.equal(checked.code, 0, `${checked.stdout}\n${checked.stderr}`);
    // Every client module and every runtime module was a source of this run (mypy counts the namespace package runtime too).
    const clients = readdirSync(path.join(out, 'svc_clients'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.py'));
    const sources = clients.length + RUNTIME_FILES.length + 1;
    assert.match(checked.stdout, new RegExp(`Success: no issues found in ${sources} source files`));
  });

  // The SDK is one of this run's roots, under the same settings as sdk/python/pyproject.toml's [tool.pyright] (strict,
  // Python 3.10, its stubs): pyright checks it here once, beside the clients that import it, and nowhere else.
  it("pyright --strict finds nothing in the same clients, nor in the exporter's runtime, nor in the SDK (one run over all of them)", async () => {
    writeClientPyrightConfig(out, ['svc_clients', exporterRuntime, path.join(sdkPythonPath, 'svc')]);
    // The SDK is checked as its own pyproject.toml says.
    const written = JSON.parse(readFileSync(path.join(out, 'pyrightconfig.json'), 'utf8'));
    const sdkSettings = readFileSync(path.join(sdkPythonPath, 'pyproject.toml'), 'utf8').split('[tool.pyright]')[1]!;
    assert.match(sdkSettings, new RegExp(`^typeCheckingMode = "${written.typeCheckingMode}"$`, 'm'));
    assert.match(sdkSettings, new RegExp(`^pythonVersion = "${written.pythonVersion}"$`, 'm'));
    assert.match(sdkSettings, /^stubPath = "typings"$/m);
    assert.equal(written.stubPath, path.join(sdkPythonPath, 'typings'));
    const checked = await runPyright(out, bare);
    assert.equal(checked.code, 0, `${checked.stdout}\n${checked.stderr}`);
    assert.match(checked.stdout, /^0 errors, 0 warnings, 0 informations/m);
    // Every file of the three roots was a source of the run, not only analysed as an import.
    const sources = [path.join(out, 'svc_clients'), exporterRuntime, path.join(sdkPythonPath, 'svc')]
      .map(
        (root) =>
          readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => /\.pyi?$/.test(f) && !f.includes('__pycache__')).length,
      )
      .reduce((sum, count) => sum + count, 0);
    assert.match(checked.stdout, new RegExp(`^Found ${sources} source files?$`, 'm'), checked.stdout);
  });

  it('the all-kinds client, in a fresh Python in another folder: each endpoint answers as the type its request() declares, with the values of the deployment; spawn().get() answers the same', async () => {
    const script = `
import collections.abc, dataclasses, json, os, svc, types, typing
import svc_clients.all_kinds as package
from svc_clients.autoscaling import work
from svc_clients.all_kinds import Owner, Point, Shape, Stats, blob, count, find, owner, point, points, shape, stats, web

def declared(workload: typing.Any) -> typing.Any:
    return typing.get_type_hints(workload.request)["return"]

def fits(value: typing.Any, tp: typing.Any) -> bool:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list:
        return type(value) is list and all(fits(item, args[0]) for item in value)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, arg) for arg in args)
    if tp is type(None):
        return value is None
    return type(value) is tp

def shown(value: typing.Any) -> typing.Any:
    if dataclasses.is_dataclass(value):
        return {"type": type(value).__name__, **{f.name: shown(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    return [shown(item) for item in value] if isinstance(value, list) else value

answers = {
    "point": (point, point.request(x=1, y=2)),
    "owner": (owner, owner.request(name="Ada")),
    "stats": (stats, stats.request(values=[1.0, 2.0, 4.5])),
    "shape": (shape, shape.request(name="tri", sides=3)),
    "points": (points, points.request(n=3)),
    "find": (find, find.request(x=-1)),
    "found": (find, find.request(x=4)),
}
seen = {name: {"declared": str(declared(w)).replace("svc_clients.all_kinds._models.", ""), "fits": fits(value, declared(w)), "value": shown(value)}
        for name, (w, value) in answers.items()}
stream = count.request(to=3)
seen["count"] = {"declared": str(declared(count)).replace("svc_clients.all_kinds._models.", ""),
                 "iterator": isinstance(stream, collections.abc.Iterator) and not isinstance(stream, list),
                 "value": [shown(item) for item in stream]}
data = blob.request(size=5)
seen["blob"] = {"declared": str(declared(blob)), "fits": fits(data, declared(blob)), "value": list(data)}
# Prefer: respond-async: the same request kept as a call; get() decodes its kept answer as request() decodes a live one.
spawned = point.spawn(x=1, y=2)
later = point.call_from_id(spawned.call_id).get(timeout=60)
seen["spawn"] = {
    "point": shown(later), "same": later == answers["point"][1], "status": spawned.status(),
    "find": find.spawn(x=-1).get(timeout=60), "shape": shown(shape.spawn(name="tri", sides=3).get(timeout=60)) == seen["shape"]["value"],
    "count": [shown(item) for item in count.spawn(to=3).get(timeout=60)], "blob": list(blob.spawn(size=5).get(timeout=60)),
}
try:
    point.spawn(x="one", y=2).get(timeout=60)  # the endpoint's own 422, kept: raised as request() raises it
except svc.InvalidRequestError as error:
    seen["spawn"]["refused"] = [type(error).__name__, error.code, error.status]
held = work.spawn(seconds=20)  # the autoscaling example sleeps that long: get() gives up first
try:
    held.get(timeout=0.5)
except TimeoutError as error:
    seen["spawn"]["timed_out"] = str(error)
held.cancel()
try:
    held.get(timeout=60)
except svc.CallCancelledError as error:
    seen["spawn"]["cancelled"] = [type(error).__name__, error.code, held.status()]
item = web.request("GET", "/items/7", params={"detail": "true"})
seen["web"] = {"status": item.status_code, "value": item.json()}
seen["module"] = package.__file__
seen["cwd"] = os.getcwd()
print(json.dumps(seen))
`;
    const seen = printed(await runPython(script, { cwd: elsewhere, env: clientEnv() }));
    const point = (x: number, y: number) => ({ type: 'Point', x, y });
    assert.equal(seen.cwd, elsewhere);
    assert.equal(seen.module, path.join(out, 'svc_clients', 'all_kinds', '__init__.py'));
    assert.deepEqual(seen.point, { declared: "<class 'Point'>", fits: true, value: point(1, 2) }, 'a dataclass');
    assert.deepEqual(
      seen.owner,
      { declared: "<class 'Owner'>", fits: true, value: { type: 'Owner', name: 'Ada', email: null } },
      'a pydantic model, as a dataclass',
    );
    assert.deepEqual(
      seen.stats,
      { declared: "<class 'Stats'>", fits: true, value: { type: 'Stats', count: 3, mean: 2.5 } },
      'a TypedDict, as a dataclass',
    );
    assert.deepEqual(
      seen.shape,
      {
        declared: "<class 'Shape'>",
        fits: true,
        value: {
          type: 'Shape',
          name: 'tri',
          corners: [point(0, 0), point(1, 1), point(2, 4)],
          owner: { type: 'Owner', name: 'Ada', email: null },
          stats: { type: 'Stats', count: 3, mean: 3 },
          label: null,
        },
      },
      'nested models',
    );
    assert.deepEqual(
      seen.points,
      { declared: 'list[Point]', fits: true, value: [point(0, 0), point(1, -1), point(2, -2)] },
      'a list of dataclasses',
    );
    assert.deepEqual(seen.find, { declared: 'Point | None', fits: true, value: null }, 'an optional, None');
    assert.deepEqual(seen.found, { declared: 'Point | None', fits: true, value: point(4, 4) }, 'an optional, set');
    assert.deepEqual(
      seen.count,
      { declared: 'typing.Iterator[Point]', iterator: true, value: [point(0, 0), point(1, 0), point(2, 0)] },
      'a generator, streamed',
    );
    assert.deepEqual(seen.blob, { declared: "<class 'bytes'>", fits: true, value: [0, 1, 2, 3, 4] }, 'bytes');
    assert.deepEqual(seen.web, { status: 200, value: { name: 'item 7', tags: ['detail'] } }, 'the ASGI app');
    assert.match(
      seen.spawn.timed_out,
      /^the call call-[0-9a-f]{20} has not ended within 0\.5 s \(it is (queued|running)\); get\(\) it again later$/,
    );
    delete seen.spawn.timed_out;
    assert.deepEqual(
      seen.spawn,
      {
        point: point(1, 2),
        same: true,
        status: 'succeeded',
        find: null,
        shape: true,
        count: [point(0, 0), point(1, 0), point(2, 0)],
        blob: [0, 1, 2, 3, 4],
        refused: ['InvalidRequestError', 'invalid_arguments', 422],
        cancelled: ['CallCancelledError', 'call_cancelled', 'cancelled'],
      },
      'spawn(): the same typed answers and errors, a time-out and a cancel',
    );
  });

  it('the all-kinds realtime handler: connect() sends a Point and receives the mirrored Point', async function () {
    const websocketPython = pythonWithWebsockets();
    if (websocketPython === null) this.skip();
    const script = `
import dataclasses, json
from svc_clients.all_kinds import Point, mirror
with mirror.connect() as session:
    session.send(Point(x=1, y=2))
    answer = session.receive(timeout=60)
print(json.dumps([type(answer).__name__, isinstance(answer, Point), dataclasses.asdict(answer)]))
`;
    const seen = printed(await runPython(script, { cwd: elsewhere, env: clientEnv(), python: websocketPython! }));
    assert.deepEqual(seen, ['Point', true, { x: 2, y: 1 }]);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import { createLocalDriver } from '../../../../core/infra/scheduler/local/driver.js';
import type { LogLine } from '../../../../core/infra/scheduler/types.js';
import { pidsMatching } from '../../../helpers/processes.js';
import { describeDriverConformance } from './conformance.js';
import { fixtureUnit, runtimeImage } from './fixture-units.js';

/**
 * The app every unit of this suite runs: one endpoint named after the
 * container's workload ($SVC_WORKLOAD, which the driver sets), so that any
 * name the suite asks for exists; a name starting with `broken` cannot be
 * imported (it prints the suite's `boom` line and exits).
 */
const APP = `
import os
import sys

import svc

app = svc.App("conformance")
name = os.environ["SVC_WORKLOAD"]
if name.startswith("broken"):
    print("starting", flush=True)
    print(f"boom: {name} cannot start", file=sys.stderr, flush=True)
    sys.exit(1)


@app.endpoint(name=name, route=f"/{name}", methods=["GET"], authorized=False)
def handler() -> dict:
    return {"workload": name}
`;
const ENTRY = 'conformance_app';

/** `--<flag> <value>` of a process's command line. */
function flag(pid: number, name: string): string | undefined {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const at = args.indexOf(`--${name}`);
    return at < 0 ? undefined : args[at + 1];
  } catch {
    return undefined;
  }
}

describe('local driver (real Python containers)', () => {
  let image: BuiltImage;
  let root: string;

  before(async function () {
    this.timeout(300_000); // the first run builds the runtime image
    image = await runtimeImage();
    root = mkdtempSync(path.join(os.tmpdir(), 'svc-conformance-'));
    writeFileSync(path.join(root, `${ENTRY}.py`), APP);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  describeDriverConformance('local driver', async () => {
    const logs: LogLine[] = [];
    const driver = createLocalDriver({
      registry: createEmbeddedRegistry(),
      logs: (line) => logs.push(line),
      startTimeoutMs: 30_000,
      stopGraceMs: 2_000,
    });
    const names = new Map<string, string>();
    return {
      driver,
      capabilities: { exactStop: true, closeStopsContainers: true, submitStartsMinimum: false },
      unit(name, scaling = {}) {
        const unit = fixtureUnit(image, ENTRY, name, {
          workers: 1,
          autoscaler: { minContainers: 0, maxContainers: 3, tasksPerContainer: 1 },
          ...scaling,
        });
        const fixed = { ...unit, source: { root, entry: ENTRY } };
        names.set(fixed.key, name);
        return fixed;
      },
      // A container's processes (its supervisor, the workers it forks) name the driver's socket folder, the workload and the container.
      async running(key) {
        const workload = names.get(key);
        const containers = pidsMatching(driver.socketDir)
          .filter((pid) => flag(pid, 'workload') === workload)
          .map((pid) => flag(pid, 'container'));
        return new Set(containers).size;
      },
      async started(key) {
        const ids = logs
          .filter((l) => l.unit === key && l.stream === 'system')
          .map((l) => /^starting container (\S+)/.exec(l.text)?.[1])
          .filter(Boolean);
        return new Set(ids).size;
      },
      processes: () => pidsMatching(driver.socketDir),
    };
  });
});

/**
 * The remote runs spawned calls go through: one per workspace, code and function, started on the
 * first call that needs it and kept while calls come (it idles out otherwise, as any run does).
 */
import { isSvcError, SvcError } from '../../model/errors.js';
import { parseManifest } from '../../model/workload/resolve.js';
import { deployedFunctionCode, type DeployedApps, type DeployedFunctionCode } from '../runs/deployed-function.js';
import type { RunManager } from '../runs/runs.js';
import type { ClassParameterValues } from '../../model/workload/class-parameters.js';
import type { CallRecord } from './types.js';

/** How long a pooled run may sit unused before it ends by itself. */
const POOLED_RUN_IDLE_SECONDS = 120;

export class RunPool {
  readonly #runs: Pick<RunManager, 'create' | 'end'>;
  readonly #deployments: DeployedApps;
  readonly #pool = new Map<string, Promise<string>>();

  constructor(runs: Pick<RunManager, 'create' | 'end'>, deployments: DeployedApps) {
    this.#runs = runs;
    this.#deployments = deployments;
  }

  /** The run for this call's code and function, started if there is none. */
  runFor(call: CallRecord): Promise<string> {
    const code = this.#code(call);
    const key = poolKey(call, code);
    let run = this.#pool.get(key);
    if (run === undefined) {
      run = this.#start(call, code);
      this.#pool.set(key, run);
      // A start that failed is not kept: the next call tries again (the error is the failed call's).
      run.catch(() => this.#pool.get(key) === run && this.#pool.delete(key));
    }
    return run;
  }

  /** Forgets the run this call used (it ended: idle, or deleted), so that the next call starts another. */
  forget(runId: string): void {
    for (const [key, run] of this.#pool) {
      void run.then((id) => id === runId && this.#pool.get(key) === run && this.#pool.delete(key)).catch(() => {});
    }
  }

  /** Ends every pooled run (the leader stops leading, or svc stops). */
  async close(): Promise<void> {
    const runs = [...this.#pool.entries()];
    this.#pool.clear();
    await Promise.all(
      runs.map(async ([key, run]) => {
        const id = await run.catch(() => null);
        const workspace = key.split('\n')[0]!;
        if (id !== null)
          await this.#runs.end(workspace, id).catch((error: unknown) => (isSvcError(error) ? undefined : Promise.reject(error)));
      }),
    );
  }

  /** The code the call runs now: a deployed app's current version (`not_found`, `app_paused` when it cannot run), or the uploaded one. */
  #code(call: CallRecord): RunCode {
    if (call.target.kind === 'deployed') return deployedFunctionCode(call.target.app, call.function, call.workspace, this.#deployments);
    // The executor sends a deferred request to its URL; it never asks for a run.
    if (call.target.kind === 'url') throw new SvcError('internal', `the call ${call.id} is a request to a URL, not a function's call`);
    return { spec: parseManifest(call.target.manifest), bundle: call.target.bundle, secretScope: undefined };
  }

  async #start(call: CallRecord, code: RunCode): Promise<string> {
    const view = await this.#runs.create({
      spec: code.spec,
      bundleSha256: code.bundle,
      workspace: call.workspace,
      function: call.function,
      principal: null,
      idleTimeoutSeconds: POOLED_RUN_IDLE_SECONDS,
      ...(code.secretScope === undefined ? {} : { secretScope: code.secretScope }),
      ...(parametersOf(call) === undefined ? {} : { parameters: parametersOf(call) }),
    });
    return view.id;
  }
}

type RunCode = Omit<DeployedFunctionCode, 'secretScope'> & { readonly secretScope: DeployedFunctionCode['secretScope'] | undefined };

/** One run per workspace, function, code and class parameters: a redeploy that changes the function's code or options starts another. */
function poolKey(call: CallRecord, code: RunCode): string {
  const workload = code.spec.workloads.find((w) => w.name === call.function);
  return [call.workspace, call.function, code.bundle, JSON.stringify(workload ?? null), JSON.stringify(parametersOf(call) ?? null)].join(
    '\n',
  );
}

/** The values of a call's class parameters; undefined for a call of a function. */
function parametersOf(call: CallRecord): ClassParameterValues | undefined {
  return call.target.kind === 'url' ? undefined : call.target.parameters;
}

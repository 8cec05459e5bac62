/**
 * Previews through the API (what `svc serve` asks a server for): stage
 * `preview` of an app, deployed from a manifest and an uploaded bundle at
 * its preview URLs (`<app>--preview`), replaced in place by the next upload
 * (a new version, switched in with no downtime: live reload), and ended by
 * its client or once idle for its timeout. Idle means: no API call about it,
 * no log follower connected and no request at its URLs. Never
 * durable: a restart of svc ends every preview.
 */
import type { DeploymentManager } from '../deployments/manager.js';
import { deploymentId, type DeploymentRef } from '../../model/deployment-keys.js';
import type { Deployment } from '../deployments/types.js';
import type { DeploymentLogs } from '../../infra/logs/deployment-logs.js';
import type { Principal } from '../../model/principal.js';
import type { AppSpec } from '../../model/workload/types.js';
import { LEASE_SWEEP_MS, type IdleLeases } from './idle-leases.js';
import { changeRefusedError } from '../deployments/offline.js';
import { isSvcError } from '../../model/errors.js';

export interface PreviewOptions {
  readonly deployments: Pick<DeploymentManager, 'deploy' | 'get' | 'remove'>;
  readonly logs: Pick<DeploymentLogs, 'subscriberCount'>;
  /** Requests in flight or queued at a unit, and when one last took or gave back a slot (the gateway's admission). */
  readonly load: (unit: string) => { readonly inFlight: number; readonly queued: number; readonly lastActiveAt: number | undefined };
  readonly leases: IdleLeases;
  readonly report: (error: unknown) => void;
}

export interface PutPreview {
  readonly spec: AppSpec;
  readonly bundleSha256: string;
  readonly workspace: string;
  readonly principal: Principal | null;
  readonly idleTimeoutSeconds: number;
  /** The app's `svc.Secret.from_dict` values (see DeployRequest#inlineSecrets). */
  readonly inlineSecrets?: readonly Readonly<Record<string, string>>[];
}

export class Previews {
  readonly #options: PreviewOptions;
  /** Idle timeout of each preview, by deployment id. */
  readonly #timeouts = new Map<string, number>();
  #closed = false;

  constructor(options: PreviewOptions) {
    this.#options = options;
  }

  /** Deploys the preview, or its next version; its lease starts again. */
  async put(request: PutPreview): Promise<Deployment> {
    if (this.#closed) throw changeRefusedError();
    const ref: DeploymentRef = { workspace: request.workspace, app: request.spec.name, stage: 'preview' };
    const id = deploymentId(ref);
    // No lease while the new version builds and starts (which may take minutes): it must not end meanwhile.
    const before = this.#timeouts.get(id);
    this.#options.leases.release(id);
    let timeout = before;
    try {
      const deployment = await this.#options.deployments.deploy({
        spec: request.spec,
        bundleSha256: request.bundleSha256,
        workspace: request.workspace,
        stage: 'preview',
        principal: request.principal,
        // A workload the new code no longer has leaves the preview, as it leaves the code.
        prune: true,
        ...(request.inlineSecrets === undefined ? {} : { inlineSecrets: request.inlineSecrets }),
      });
      timeout = request.idleTimeoutSeconds;
      return deployment;
    } finally {
      // A failed update keeps the preview that was running, with its lease.
      if (timeout !== undefined && this.#options.deployments.get(ref) !== null) this.#hold(ref, timeout);
    }
  }

  #hold(ref: DeploymentRef, idleTimeoutSeconds: number): void {
    const id = deploymentId(ref);
    this.#timeouts.set(id, idleTimeoutSeconds);
    this.#options.leases.hold(id, {
      timeoutMs: idleTimeoutSeconds * 1000,
      busy: () => this.#busy(ref),
      // Removed meanwhile (a DELETE during an update): nothing is left to end.
      expire: () =>
        void this.#remove(ref).catch((error: unknown) =>
          isSvcError(error) && error.code === 'not_found' ? undefined : this.#options.report(error),
        ),
    });
  }

  /** The preview, or null; asking counts as using it. */
  get(ref: DeploymentRef): Deployment | null {
    const deployment = this.#options.deployments.get(ref);
    if (deployment) this.#options.leases.touch(deploymentId(ref));
    return deployment;
  }

  idleTimeoutSeconds(ref: DeploymentRef): number | null {
    return this.#timeouts.get(deploymentId(ref)) ?? null;
  }

  expiresAt(ref: DeploymentRef): Date | null {
    return this.#options.leases.expiresAt(deploymentId(ref));
  }

  /** Ends the preview: its URLs answer 404, its containers stop once requests in flight are done. */
  remove(ref: DeploymentRef): Promise<void> {
    this.#options.leases.release(deploymentId(ref));
    return this.#remove(ref);
  }

  /** svc is stopping: no new previews (the deployment manager stops the running ones). */
  close(): void {
    this.#closed = true;
  }

  async #remove(ref: DeploymentRef): Promise<void> {
    this.#timeouts.delete(deploymentId(ref));
    await this.#options.deployments.remove(ref);
  }

  #busy(ref: DeploymentRef): boolean {
    const deployment = this.#options.deployments.get(ref);
    if (!deployment) return false;
    const followed = deployment.workloads.some((w) => this.#options.logs.subscriberCount({ ...ref, workload: w.name }) > 0);
    // A request served since the last sweep counts as use too, however short it was.
    const recent = Date.now() - 2 * LEASE_SWEEP_MS;
    return (
      followed ||
      deployment.units.some((unit) => {
        const load = this.#options.load(unit);
        return load.inFlight + load.queued > 0 || (load.lastActiveAt ?? 0) > recent;
      })
    );
  }
}

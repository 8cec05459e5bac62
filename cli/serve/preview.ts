/**
 * The preview `svc serve` keeps live on the embedded platform: each version
 * (the first deploy, then one per batch of saves: reloading.ts) is stored as
 * a bundle and deployed into the platform of this process as the preview's
 * next version — the manager starts it beside the running one and switches
 * with no downtime; requests in flight finish on the old one.
 */
import { rm } from 'node:fs/promises';
import type { BundleStore } from '../../core/infra/bundles/store.js';
import type { Deployment, DeployProgress } from '../../core/services/deployments/types.js';
import { DEFAULT_WORKSPACE, type Platform } from '../../core/platform/platform.js';
import { ReloadingPreview, type ChangedRead, type ReloadingOptions, type Shown } from './reloading.js';
import { summaryOfDeployment } from './summary.js';

export { describeFiles } from './reloading.js';

export interface PreviewOptions extends ReloadingOptions {
  readonly platform: Platform;
  readonly store: BundleStore;
}

export class Preview extends ReloadingPreview<Deployment> {
  readonly #platform: Platform;
  readonly #store: BundleStore;

  constructor(options: PreviewOptions) {
    super(options);
    this.#platform = options.platform;
    this.#store = options.store;
  }

  protected async deploy(read: ChangedRead, progress: (event: DeployProgress) => void): Promise<Deployment> {
    const { bundle, manifest } = read;
    try {
      await this.#store.put(bundle.path, bundle.sha256);
    } finally {
      await rm(bundle.path, { force: true });
    }
    return this.#platform.deployments.deploy(
      {
        spec: manifest.spec,
        bundleSha256: bundle.sha256,
        workspace: DEFAULT_WORKSPACE,
        stage: 'preview',
        principal: null,
        prune: true,
        ...(manifest.inlineSecrets === undefined ? {} : { inlineSecrets: manifest.inlineSecrets }),
      },
      progress,
    );
  }

  protected show(deployment: Deployment): Shown {
    return { summary: summaryOfDeployment(deployment), warnings: deployment.warnings };
  }

  protected async removeApp(app: string): Promise<void> {
    await this.#platform.deployments.remove({ workspace: DEFAULT_WORKSPACE, app, stage: 'preview' });
  }
}

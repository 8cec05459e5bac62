/**
 * The preview `svc serve --server` keeps live on a svc server: each version
 * (the first deploy, then one per batch of saves: reloading.ts) is uploaded
 * unless the server has its bundle (`HEAD /api/v1/bundles/:sha256`, then
 * `POST /api/v1/bundles`) and put as the preview's next version
 * (`PUT /api/v1/apps/:app/preview`, answered once it serves: the server
 * switches with no downtime and drops the workloads the code no longer has).
 * Every workload's logs are followed (log-streams.ts), which also keeps the
 * preview from idling; `end()` deletes it.
 */
import { readFile, rm } from 'node:fs/promises';
import type { AppView } from '../../core/http/api/app-view.js';
import type { CreatedBundle } from '../../core/infra/bundles/create.js';
import { formatBytes } from '../../core/model/format-bytes.js';
import { isSvcError } from '../../core/model/errors.js';
import { API_PREFIX, type ApiClient, dropBody } from '../api-client.js';
import { LogStreams } from './log-streams.js';
import { ReloadingPreview, type ChangedRead, type ReloadingOptions, type Shown } from './reloading.js';
import { summaryOfView } from './summary.js';

export interface RemotePreviewOptions extends ReloadingOptions {
  readonly client: ApiClient;
}

export const previewPath = (app: string) => `${API_PREFIX}/apps/${encodeURIComponent(app)}/preview`;

export class RemotePreview extends ReloadingPreview<AppView> {
  readonly #client: ApiClient;
  readonly #streams: LogStreams;

  constructor(options: RemotePreviewOptions) {
    super(options);
    this.#client = options.client;
    const { out } = options;
    this.#streams = new LogStreams({
      client: options.client,
      print: (workload, line) => out.log(workload, line.text, line.stream === 'system'),
      warn: (message) => out.warn(message),
    });
  }

  /** The workloads whose logs are followed (`<app>/<workload>`). */
  get followed(): string[] {
    return this.#streams.keys;
  }

  protected async deploy(read: ChangedRead, _progress: unknown, first: boolean): Promise<AppView> {
    const { out } = this.options;
    const { bundle, manifest } = read;
    try {
      await this.#upload(bundle, first);
    } finally {
      await rm(bundle.path, { force: true });
    }
    if (first)
      out.step(`deploying the preview on ${this.#client.server}; it answers once the preview serves (a first image build takes a while)`);
    const started = performance.now();
    const view = await this.#client.json<AppView>('PUT', previewPath(manifest.spec.name), {
      json: {
        manifest: manifest.raw,
        bundle: bundle.sha256,
        ...(manifest.inlineSecrets === undefined ? {} : { inlineSecrets: manifest.inlineSecrets }),
      },
      long: true,
    });
    if (first) out.done(`the preview serves (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    return view;
  }

  async #upload(bundle: CreatedBundle, first: boolean): Promise<void> {
    const { out } = this.options;
    if (await this.#client.exists(`${API_PREFIX}/bundles/${bundle.sha256}`)) return;
    if (first) out.step(`uploading the bundle (${formatBytes(bundle.size)}) to ${this.#client.server}`);
    const answer = await this.#client.send('POST', `${API_PREFIX}/bundles`, {
      headers: { 'Content-Type': 'application/gzip', 'X-Bundle-Sha256': bundle.sha256 },
      body: await readFile(bundle.path),
      long: true,
    });
    dropBody(answer);
  }

  protected show(view: AppView, read: ChangedRead): Shown {
    return { summary: summaryOfView(view.name, view.deployments, read.manifest.spec), warnings: view.warnings };
  }

  protected async removeApp(app: string): Promise<void> {
    await this.#delete(app);
  }

  protected override deployed(view: AppView): void {
    const app = view.name;
    this.#streams.sync(
      view.deployments.map((d) => ({
        key: `${app}/${d.workload}`,
        label: d.workload,
        path: `${previewPath(app)}/deployments/${encodeURIComponent(d.workload)}/logs`,
      })),
    );
  }

  /** svc stops: the log streams close and the preview is deleted (already gone: fine). */
  async end(): Promise<void> {
    this.stop();
    await this.#streams.close();
    const app = this.app;
    if (app !== undefined) await this.#delete(app);
  }

  async #delete(app: string): Promise<void> {
    await this.#client.delete(previewPath(app)).catch((error: unknown) => {
      if (!(isSvcError(error) && error.code === 'not_found')) throw error;
    });
  }
}

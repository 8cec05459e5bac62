import { loadConfig } from '../../config/load.js';
import { formatBytes } from '../../core/bundles/format.js';
import type { Deployment } from '../../core/deployments/types.js';
import { loadManifest } from '../../core/manifest/load.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform.js';
import { curlExample } from '../curl-example.js';
import { shellQuote } from '../shell-quote.js';
import { createOutput, printError, type Output } from '../output.js';
import { onStopSignal } from '../stop-signal.js';

export interface ServeFlags {
  readonly port?: string | number;
  readonly host?: string;
  readonly 'data-dir'?: string;
  readonly 'base-domain'?: string;
  readonly config?: string;
}

/**
 * `svc serve <app_or_module>`: starts the embedded platform in this process,
 * deploys a preview of the app, prints each workload's URL with a curl line,
 * streams the workloads' logs, and removes everything on Ctrl-C.
 */
export default async function serve(target: string, flags: ServeFlags): Promise<void> {
  const out = createOutput();
  let platform: Platform | undefined;
  let serving = false;
  const stop = onStopSignal(async () => {
    // Before the preview is up there is nothing to drain: exit now; the driver's exit hook kills any container.
    if (!serving) process.exit(130);
    out.step('stopping the preview…');
    await platform?.close();
    out.done('stopped');
  });
  try {
    const config = loadConfig({ flags: { port: flags.port, host: flags.host, dataDir: flags['data-dir'], baseDomain: flags['base-domain'] }, file: flags.config });
    out.step(`reading ${target}`);
    const manifest = await loadManifest({ target, python: config.python });
    for (const line of manifest.logs) out.log('import', line);
    const { spec } = manifest;
    out.done(`app ${spec.name}: ${spec.workloads.length} workload${spec.workloads.length === 1 ? '' : 's'}`);

    platform = await startPlatform({
      config,
      // A preview keeps no state, so several previews can share a data dir (svc server keeps it in <data dir>/state).
      state: 'memory',
      logs: (line) => out.log(line.unit.split('/').pop() ?? line.unit, line.text, line.stream === 'system'),
    });
    if (platform.ownerToken.created) out.done(`created the owner token in ${platform.ownerToken.path}`);
    for (const warning of platform.ownerToken.warnings) out.warn(warning);
    out.done(`platform listening on ${platform.url} (data in ${config.dataDir})`);

    const deployment = await platform.deployments.deploy(
      { spec, source: { root: manifest.root, entry: spec.entry }, workspace: DEFAULT_WORKSPACE, stage: 'preview', principal: null },
      (event) => {
        if (event.type === 'bundle') {
          if (event.status === 'packing') out.step(`bundling ${event.root}`);
          else {
            for (const warning of event.bundle.warnings) out.warn(`bundle: ${warning}`);
            const { sha256, files, size } = event.bundle;
            out.done(`bundle ${sha256.slice(0, 12)}: ${files} file${files === 1 ? '' : 's'}, ${formatBytes(size)}`);
          }
        } else if (event.type === 'image' && event.status === 'building') out.step(`image ${event.imageId}: preparing`);
        else if (event.type === 'image' && event.status === 'log') out.log(event.imageId, event.line, true);
        else if (event.type === 'image') out.done(`image ${event.imageId}: ${event.status === 'cached' ? 'ready (cached)' : 'built'}`);
        else if (event.status === 'ready') out.done(`${event.workload} is healthy`);
      },
    );
    // Options the SDK accepted but this version ignores: say so rather than let them look effective.
    for (const warning of deployment.warnings) out.warn(warning);
    printSummary(out, deployment, `$(cat ${shellQuote(platform.ownerToken.path)})`);
    serving = true;
    out.step('logs of every workload follow; press Ctrl-C to stop');
    await stop.wait;
  } catch (error) {
    process.exitCode = printError(error);
    await platform?.close();
  } finally {
    stop.dispose();
  }
}

function printSummary(out: Output, deployment: Deployment, tokenExpression: string): void {
  const { bold, dim } = out.color;
  out.result();
  out.result(`${bold(`Preview of ${deployment.ref.app} is live.`)}`);
  for (const workload of deployment.workloads) {
    out.result();
    const access = workload.kind === 'function' ? '' : workload.authorized ? 'needs a bearer token' : 'public';
    out.result(`  ${bold(workload.name)}  ${dim(workload.kind)}  ${workload.methods.join(', ')}  ${dim(access)}`.replace(/ {3,}/g, '  ').trimEnd());
    if (workload.url) {
      out.result(`    ${workload.url}`);
      if (workload.hostUrl) out.result(`    ${workload.hostUrl}`);
      const example = curlExample(workload, { tokenExpression });
      if (example) out.result(`    ${example}`);
      else if (workload.kind === 'realtime') {
        const auth = workload.authorized ? `send "Authorization: Bearer ${tokenExpression}", or ?token=<token> from a browser` : 'no token needed';
        out.result(`    ${dim(`connect with any WebSocket client; ${auth}`)}`);
      }
    } else if (workload.kind === 'function') {
      out.result(`    ${dim('a function is not served over HTTP; remote calls (svc run, .remote()) are not available in this version yet')}`);
    } else if (workload.note) {
      out.result(`    ${dim(workload.note)}`);
    }
  }
  out.result();
}

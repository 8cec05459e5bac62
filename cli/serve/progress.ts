/**
 * How `svc serve` shows a deploy's progress on stderr. The first deploy
 * shows every step; a reload only what takes long or needs attention (an
 * image to build, bundle warnings), so that a save prints one line.
 */
import { formatBytes } from '../../core/model/format-bytes.js';
import type { CreatedBundle } from '../../core/infra/bundles/create.js';
import type { DeployProgress } from '../../core/services/deployments/types.js';
import type { Output } from '../output.js';

export function printBundle(out: Output, bundle: CreatedBundle, quiet: boolean): void {
  for (const warning of bundle.warnings) out.warn(`bundle: ${warning}`);
  if (!quiet)
    out.done(`bundle ${bundle.sha256.slice(0, 12)}: ${bundle.files} file${bundle.files === 1 ? '' : 's'}, ${formatBytes(bundle.size)}`);
}

/** Prints deploy events; bundle events are not printed (the reader's bundle is, with its file count). */
export function progressPrinter(out: Output, quiet: boolean): (event: DeployProgress) => void {
  let building = false;
  return (event) => {
    if (event.type === 'bundle') return;
    if (event.type === 'image' && event.status === 'building') {
      if (!quiet) out.step(`image ${event.imageId}: preparing`);
    } else if (event.type === 'image' && event.status === 'log') {
      if (quiet && !building) out.step(`image ${event.imageId}: preparing`);
      building = true;
      out.log(event.imageId, event.line, true);
    } else if (event.type === 'image') {
      if (!quiet || building) out.done(`image ${event.imageId}: ${event.status === 'cached' ? 'ready (cached)' : 'built'}`);
    } else if (event.status === 'ready' && !quiet) out.done(`${event.workload} is healthy`);
  };
}

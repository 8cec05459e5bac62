/**
 * The code a deploy runs and records: a bundle already in the store, or the
 * project folder bundled now (with a bundle store), else the folder as it is.
 */
import type { BundleInfo, CodeBundles } from '../../infra/bundles/types.js';
import { SvcError } from '../../model/errors.js';
import type { SourceRef } from '../../infra/scheduler/types.js';
import type { AppSpec } from '../../model/workload/types.js';
import type { DeployProgress } from './types.js';

export interface DeployCode {
  readonly source: SourceRef;
  readonly bundle: BundleInfo | null;
}

export async function deployCode(
  bundles: CodeBundles | undefined,
  spec: AppSpec,
  request: { readonly source?: SourceRef; readonly bundleSha256?: string },
  progress: (event: DeployProgress) => void,
): Promise<DeployCode> {
  if (request.bundleSha256 !== undefined) {
    if (!bundles) throw new SvcError('internal', 'this platform keeps no bundles, so it cannot deploy one by its sha256');
    const prepared = await bundles.fromStore(request.bundleSha256, spec.entry);
    progress({ type: 'bundle', status: 'ready', bundle: prepared.bundle });
    return prepared;
  }
  if (!request.source) throw new SvcError('internal', 'a deploy needs a project folder or a bundle sha256');
  if (!bundles) return { source: request.source, bundle: null };
  progress({ type: 'bundle', status: 'packing', root: request.source.root });
  const prepared = await bundles.prepare(request.source);
  progress({ type: 'bundle', status: 'ready', bundle: prepared.bundle });
  return prepared;
}

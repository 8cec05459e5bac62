import { SvcError } from '../../model/errors.js';

/** Any failure inside a build, as `image_build_failed` (an SvcError keeps its own code). */
export function asBuildError(error: unknown): SvcError {
  if (error instanceof SvcError) return error;
  return new SvcError('image_build_failed', (error as Error).message, { cause: error });
}

/** Names the image in a build failure; shared builds fail the same way for every waiter. */
export function forImage(error: unknown, imageId: string): unknown {
  if (!(error instanceof SvcError) || error.code !== 'image_build_failed') return error;
  return new SvcError('image_build_failed', `building image ${imageId} failed: ${error.message}`, {
    hint: error.hint,
    details: error.details,
    cause: error,
  });
}

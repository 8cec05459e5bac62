/**
 * Images: the environment a container runs in. The embedded default builds
 * one Python virtual environment per image spec; a cluster builder (later)
 * produces OCI images. Builds are content-addressed and cached.
 */
import type { ImageSpec } from '../workload/types.js';

export interface BuiltImage {
  /** Content address of what was built (spec + runtime requirements + builder version). */
  readonly key: string;
  /** The manifest's image id this build serves. */
  readonly imageId: string;
  /** Interpreter that runs the container runtime. */
  readonly pythonPath: string;
  /** Where the environment lives. */
  readonly path: string;
  /** True when the build was found in the cache. */
  readonly cached: boolean;
}

export type BuildLog = (line: string) => void;

export interface ImageBuilder {
  readonly name: string;
  build(spec: ImageSpec, log: BuildLog): Promise<BuiltImage>;
}

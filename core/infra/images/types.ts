/**
 * Images: the environment a container runs in. The embedded default builds
 * Python virtual environments in two layers (the runtime's own requirements,
 * shared per Python version, and each image's packages); for Nomad's docker
 * driver the OCI builder pushes images to a registry (`oci/`). Builds are content-addressed and cached.
 */
import type { ImageSpec } from '../../model/workload/types.js';

export interface BuiltImage {
  /**
   * Content address of the environment: for an image with packages, a hash
   * of the Python version, the ordered package list, the runtime layer's key
   * and the builder version; for one without, the runtime layer's own key.
   */
  readonly key: string;
  /** The manifest's image id this build serves. */
  readonly imageId: string;
  /** Interpreter that runs the container runtime. */
  readonly pythonPath: string;
  /** Where the environment lives. */
  readonly path: string;
  /** True when the build was found in the cache. */
  readonly cached: boolean;
  /**
   * The shared environment holding the runtime's own requirements that this
   * one sees (the venv builder's runtime layer); equal to `path` for an
   * image without packages. Absent for builders without layers.
   */
  readonly runtimeLayer?: string;
  /**
   * The image a container engine pulls, pinned by digest
   * (`registry.example.com/svc/img-…@sha256:…`); only from builders that push
   * images (the OCI builder, for Nomad's docker driver).
   */
  readonly image?: string;
}

export type BuildLog = (line: string) => void;

export interface ImageBuilder {
  readonly name: string;
  /**
   * Builds the image or finds it in the cache. Calls for an image already
   * being built join that build, and every caller's `log` gets the whole
   * build log (a late caller first gets the lines so far).
   */
  build(spec: ImageSpec, log: BuildLog): Promise<BuiltImage>;
  /** Stops what the builder still does after its builds returned (the venv builder's bytecode). */
  close?(): Promise<void>;
}

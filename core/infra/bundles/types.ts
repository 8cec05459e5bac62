/**
 * Code bundles: the deterministic tar.gz of a project (`python -m svc.bundle`),
 * kept by sha256 in the data dir and extracted — safely, once per sha256 —
 * into the cache dir, where containers run it from.
 */
import type { SourceRef } from '../scheduler/types.js';

/** What a deploy says about the bundle its containers run. */
export interface BundleInfo {
  /** Hex sha256 of the tar.gz: the bundle's identity. */
  readonly sha256: string;
  /** Size of the tar.gz in bytes. */
  readonly size: number;
  /** Regular files and links in the bundle (folders not counted); null for a bundle taken from the store, not counted. */
  readonly files: number | null;
  /** Lines the bundler warned with (links it skipped, special files). */
  readonly warnings: readonly string[];
}

/** Bounds on what extracting one bundle may write; checked while the archive streams. */
export interface ExtractLimits {
  /** Sum of the sizes of every entry (and of the archive's extended headers). */
  readonly maxTotalBytes: number;
  /** Size of any one entry. */
  readonly maxEntryBytes: number;
  /** Number of entries (files, folders and links). */
  readonly maxEntries: number;
}

export const DEFAULT_EXTRACT_LIMITS: ExtractLimits = {
  maxTotalBytes: 1024 * 1024 * 1024,
  maxEntryBytes: 256 * 1024 * 1024,
  maxEntries: 100_000,
};

/** Why a bundle was refused; `details.rule` of a `bundle_invalid` / `bundle_too_large` error. */
export type BundleRule =
  | 'not_gzip'
  | 'corrupt'
  | 'truncated'
  | 'bad_header'
  | 'absolute_path'
  | 'parent_component'
  | 'link_outside'
  | 'link_loop'
  | 'hard_link'
  | 'special_file'
  | 'unsupported_type'
  | 'beneath_link'
  | 'duplicate'
  | 'entry_too_large'
  | 'total_too_large'
  | 'too_many_entries'
  | 'trailing_data'
  // Not about the archive's entries:
  | 'sha256_mismatch'
  | 'missing_module';

/** A project's code, bundled, stored and extracted for containers. */
export interface PreparedSource {
  /** Where containers run the code from: `<cacheDir>/code/<sha256>`. */
  readonly source: SourceRef;
  readonly bundle: BundleInfo;
}

/** What the deployment manager needs from bundles. */
export interface CodeBundles {
  /**
   * Bundles `source.root`, stores the bundle and returns the extracted copy,
   * so that later edits of the project do not change a running deployment.
   */
  prepare(source: SourceRef): Promise<PreparedSource>;
  /**
   * The code of a bundle already in the store (uploaded, or deployed before a
   * restart): extracted once per sha256, checked to hold the module `entry`.
   * `not_found` when no bundle with that sha256 is stored.
   */
  fromStore(sha256: string, entry: string): Promise<PreparedSource>;
}

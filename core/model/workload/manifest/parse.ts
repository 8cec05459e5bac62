/**
 * Reads Manifest v1: JSON text → checked `ManifestV1`. Validation reports
 * every broken rule with its path (never only the first), so one failed
 * deploy shows the user everything to fix.
 */
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { SvcError } from '../../errors.js';
import { compile, compiledPart, defineChecks, type ValidateFunction } from '../../schema/ajv.js';
import { issuesOf } from '../../schema/issues.js';
import type { ValidationIssue, WorkloadKind } from '../types.js';
import { manifestChecks } from './checks.js';
import { manifestSchema, manifestSchemaId } from './schema.js';
import type { ManifestV1 } from './types.js';

export const supportedManifestVersion = 1;

/** Parses and validates manifest JSON; throws `manifest_invalid` for bad JSON (with its position) or broken rules. */
export function parseManifestText(text: string): ManifestV1 {
  const value = parseJsonText(text);
  assertValidManifest(value);
  return value;
}

/**
 * What `python -m svc.manifest` prints: the manifest, and beside it (taken out before it is
 * validated, so that it never travels or is kept inside) the `svc.Secret.from_dict` values
 * under `inline_secrets`, which the sender passes on as the API's `inlineSecrets`.
 */
export function parseManifestOutput(text: string): { readonly raw: ManifestV1; readonly inlineSecrets?: Record<string, string>[] } {
  const value = parseJsonText(text);
  let inlineSecrets: Record<string, string>[] | undefined;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, INLINE_SECRETS_KEY)) {
    const record = value as Record<string, unknown>;
    inlineSecrets = record[INLINE_SECRETS_KEY] as Record<string, string>[];
    delete record[INLINE_SECRETS_KEY];
  }
  assertValidManifest(value);
  return { raw: value, ...(inlineSecrets === undefined ? {} : { inlineSecrets }) };
}

/** The key of what svc.manifest prints that holds the inline secret values (sdk/python/svc/manifest/_build.py). */
export const INLINE_SECRETS_KEY = 'inline_secrets';

function parseJsonText(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const offset = jsonErrorOffset(text);
    const where = offset === null ? '' : ` at ${describePosition(text, offset)}`;
    throw new SvcError('manifest_invalid', `The manifest is not valid JSON${where}: ${reason}`, {
      hint: 'The manifest is written by `python -m svc.manifest`; make sure nothing else writes to its stdout.',
      details: { issues: [{ path: '(root)', message: `not valid JSON${where}` }] },
      cause: error,
    });
  }
  return value;
}

/**
 * Offset of the first syntax error of `text` (jsonc-parser, held to strict JSON), or null if
 * there is none: V8's JSON.parse names the position for some errors only.
 */
export function jsonErrorOffset(text: string): number | null {
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  return errors[0]?.offset ?? null;
}

/** Line and column (1-based) of an offset. */
export function positionAt(text: string, offset: number): { readonly offset: number; readonly line: number; readonly column: number } {
  const before = text.slice(0, offset);
  return { offset, line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

function describePosition(text: string, offset: number): string {
  const { line, column } = positionAt(text, offset);
  return `line ${line}, column ${column} (position ${offset})`;
}

defineChecks(manifestChecks);
let compiled: ValidateFunction | undefined;
/** Compiled on first use: a command that never reads a manifest never pays for it. */
const validateSchema = (): ValidateFunction => (compiled ??= compile(manifestSchema));

/** Every rule of docs/manifest.md the value breaks; [] when it is a valid Manifest v1. */
export function validateManifest(value: unknown): ValidationIssue[] {
  const version = typeof value === 'object' && value !== null ? (value as { manifest_version?: unknown }).manifest_version : undefined;
  if (typeof version === 'number' && Number.isInteger(version) && version > supportedManifestVersion) {
    // A newer format: its other keys may mean something else, so listing them would only mislead.
    return [
      { path: 'manifest_version', message: `unsupported manifest version ${version}; this svc reads version ${supportedManifestVersion}` },
    ];
  }
  const validate = validateSchema();
  return validate(value) ? [] : issuesOf(value, validate.errors);
}

/** Every rule a kind's `options` object breaks, with paths below it (`memory`, `autoscaler.min_containers`). */
export function validateOptions(kind: WorkloadKind, options: unknown): ValidationIssue[] {
  validateSchema();
  const validate = compiledPart(`${manifestSchemaId}#/$defs/options-${kind}`);
  return validate(options) ? [] : issuesOf(options, validate.errors);
}

/** Throws one `manifest_invalid` error listing every issue unless `value` is a valid Manifest v1. */
export function assertValidManifest(value: unknown): asserts value is ManifestV1 {
  const issues = validateManifest(value);
  if (issues.length > 0) throw manifestInvalidError(issues);
}

/** The error for a manifest that breaks rules: every issue on its own line, and in `details.issues`. */
export function manifestInvalidError(issues: readonly ValidationIssue[]): SvcError {
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  const lines = issues.map((issue) => `  - ${issue.path}: ${issue.message}`);
  return new SvcError('manifest_invalid', [`The app manifest is invalid (${count}):`, ...lines].join('\n'), {
    hint: 'Fix these options in your app. If your code looks right, the svc SDK and platform versions may disagree: upgrade both.',
    details: { issues: [...issues] },
  });
}

/**
 * Reads Manifest v1: JSON text → checked `ManifestV1`. Validation reports
 * every broken rule with its path (never only the first), so one failed
 * deploy shows the user everything to fix.
 */
import { SvcError } from '../errors.js';
import { IssueCollector } from '../workload/issues.js';
import { appKeys, entryRule, manifestKeys, nameProblem } from '../workload/rules.js';
import type { ValidationIssue } from '../workload/types.js';
import { jsonErrorOffset, positionAt } from './json-position.js';
import { nameIssue } from './name-issue.js';
import { checkKeys, checkObject, checkString, jsonTypeName } from './shape-checks.js';
import type { ManifestV1 } from './types.js';
import { validateImages } from './validate-images.js';
import { validateWorkloads } from './validate-workloads.js';

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

function describePosition(text: string, offset: number): string {
  const { line, column } = positionAt(text, offset);
  return `line ${line}, column ${column} (position ${offset})`;
}

/** Every rule of docs/manifest.md the value breaks; [] when it is a valid Manifest v1. */
export function validateManifest(value: unknown): ValidationIssue[] {
  const issues = IssueCollector.root();
  if (!checkObject(value, issues)) return [...issues.issues];

  const version = value.manifest_version;
  if (typeof version === 'number' && Number.isInteger(version) && version > supportedManifestVersion) {
    // A newer format: its other keys may mean something else, so listing them would only mislead.
    issues.add(`unsupported manifest version ${version}; this svc reads version ${supportedManifestVersion}`, 'manifest_version');
    return [...issues.issues];
  }
  checkKeys(value, manifestKeys, issues);
  if (Object.hasOwn(value, 'manifest_version') && version !== supportedManifestVersion) {
    const got = typeof version === 'number' ? String(version) : jsonTypeName(version);
    issues.add(`must be ${supportedManifestVersion}, got ${got}`, 'manifest_version');
  }
  if (Object.hasOwn(value, 'sdk_version')) checkString(value.sdk_version, issues.at('sdk_version'), { nonEmpty: true });
  if (Object.hasOwn(value, 'entry') && checkString(value.entry, issues.at('entry')) && !entryRule.pattern.test(value.entry)) {
    issues.add(`must be ${entryRule.text}, got ${JSON.stringify(value.entry)}`, 'entry');
  }
  if (Object.hasOwn(value, 'app') && checkObject(value.app, issues.at('app'))) {
    checkKeys(value.app, appKeys, issues.at('app'));
    const name = value.app.name;
    if (Object.hasOwn(value.app, 'name') && checkString(name, issues.at('app').at('name'))) {
      // svc's one name rule (core/workspaces/names.ts): app names end up in URLs, job ids and service names.
      const problem = nameProblem(name, 'app');
      if (problem !== null) issues.at('app').add(nameIssue(name, problem), 'name');
    }
  }

  const imageIds = Object.hasOwn(value, 'images') ? validateImages(value.images, issues.at('images')) : null;
  const used = Object.hasOwn(value, 'workloads') ? validateWorkloads(value.workloads, imageIds, issues.at('workloads')) : null;
  if (imageIds !== null && used !== null && Array.isArray(value.workloads)) {
    for (const [id, index] of imageIds) {
      if (!used.has(id)) issues.at('images').add('not used by any workload (images lists only the images workloads use)', index);
    }
  }
  return [...issues.issues];
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

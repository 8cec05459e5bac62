/** Checks `images`: shape, id format and content address, order, duplicates. */
import type { IssueCollector } from '../workload/issues.js';
import { imageIdRule, imageKeys, pythonVersionRule } from '../workload/rules.js';
import { imageIdFor } from './image-id.js';
import { checkArray, checkKeys, checkObject, checkString } from './shape-checks.js';

/**
 * Validates the images list and returns the ids that workloads may refer to
 * (every string id, even a wrong one, so a bad id is reported once — here —
 * and not again at each workload using it). Null when `images` is not an array.
 */
export function validateImages(images: unknown, issues: IssueCollector): Map<string, number> | null {
  if (!checkArray(images, issues)) return null;
  const ids = new Map<string, number>();
  let previousId: string | null = null;
  images.forEach((image, index) => {
    const at = issues.at(index);
    if (!checkObject(image, at)) return;
    checkKeys(image, imageKeys, at);
    const version = Object.hasOwn(image, 'python_version') ? checkPythonVersion(image.python_version, at.at('python_version')) : null;
    const packages = Object.hasOwn(image, 'python_packages') ? checkPackages(image.python_packages, at.at('python_packages')) : null;
    if (!Object.hasOwn(image, 'id') || !checkString(image.id, at.at('id'))) return;

    const id = image.id;
    const idIssues = at.at('id');
    if (!imageIdRule.pattern.test(id)) {
      idIssues.add(`must be ${imageIdRule.text}, got ${JSON.stringify(id)}`);
    } else if (version !== null && packages !== null) {
      const expected = imageIdFor({ python_version: version, python_packages: packages });
      if (expected !== id) idIssues.add(`does not match the image's python_version and python_packages; expected ${expected}`);
    }
    const first = ids.get(id);
    if (first !== undefined) idIssues.add(`duplicate image id (also images[${first}])`);
    else ids.set(id, index);
    if (previousId !== null && id < previousId) idIssues.add('out of order: images must be sorted by id');
    previousId = id;
  });
  return ids;
}

function checkPythonVersion(value: unknown, issues: IssueCollector): string | null {
  if (!checkString(value, issues)) return null;
  if (pythonVersionRule.pattern.test(value)) return value;
  issues.add(`must be ${pythonVersionRule.text}, got ${JSON.stringify(value)}`);
  return null;
}

/** Valid packages, or null when any entry is wrong (then the id cannot be checked). */
function checkPackages(value: unknown, issues: IssueCollector): string[] | null {
  if (!checkArray(value, issues)) return null;
  let valid = true;
  const seen = new Map<string, number>();
  value.forEach((requirement, index) => {
    if (!checkString(requirement, issues.at(index), { nonEmpty: true })) {
      valid = false;
      return;
    }
    // The image builder hands these to pip: an option ("-e", "--index-url") or a second line would be obeyed.
    if (/[\r\n]/.test(requirement)) issues.add('must be one line: one requirement per list item', index);
    else if (requirement.trimStart().startsWith('-')) issues.add('must be a requirement, not a pip option', index);
    const first = seen.get(requirement);
    if (first !== undefined) issues.at(index).add(`duplicate package (also python_packages[${first}])`);
    else seen.set(requirement, index);
  });
  return valid ? (value as string[]) : null;
}

/**
 * Checks a workload's `parameters` and `returns` JSON Schemas as far as the
 * platform relies on them: the argument validator and the client exporters
 * read `properties` and `required`, so those must be consistent.
 */
import type { IssueCollector } from '../workload/issues.js';
import { hasSignature } from '../workload/rules.js';
import type { WorkloadKind } from '../workload/types.js';
import { checkArray, checkObject, isPlainObject, jsonTypeName } from './shape-checks.js';

/** Parameter name the runtime passes itself; the SDK leaves it out of the schema. */
const reservedParameter = 'context';

export function validateParameters(kind: WorkloadKind, schema: unknown, issues: IssueCollector): void {
  if (!expectSchemaOrNull(kind, schema, issues)) return;
  const object = schema as Record<string, unknown>;
  if (!Object.hasOwn(object, 'type')) issues.add('missing; parameters are an "object" schema', 'type');
  else if (object.type !== 'object') issues.add(`must be "object", got ${JSON.stringify(object.type)}`, 'type');
  let properties: Record<string, unknown> = {};
  if (Object.hasOwn(object, 'properties') && checkObject(object.properties, issues.at('properties'))) {
    properties = object.properties;
    for (const [name, property] of Object.entries(properties)) {
      if (!isPlainObject(property)) issues.at('properties').add(`must be a schema object, got ${jsonTypeName(property)}`, name);
    }
    if (Object.hasOwn(properties, reservedParameter)) {
      issues.at('properties').add('is reserved for the runtime and must not appear in the schema', reservedParameter);
    }
  }
  if (Object.hasOwn(object, 'required')) checkRequired(object.required, properties, issues.at('required'));
  const extra = object.additionalProperties;
  if (extra !== undefined && typeof extra !== 'boolean' && !isPlainObject(extra)) {
    issues.add(`must be a boolean or a schema object, got ${jsonTypeName(extra)}`, 'additionalProperties');
  }
}

export function validateReturns(kind: WorkloadKind, schema: unknown, issues: IssueCollector): void {
  expectSchemaOrNull(kind, schema, issues);
}

/** True when `schema` is an object the caller should look into. */
function expectSchemaOrNull(kind: WorkloadKind, schema: unknown, issues: IssueCollector): boolean {
  if (!hasSignature(kind)) {
    if (schema !== null) issues.add(`must be null for kind ${kind}, got ${jsonTypeName(schema)}`);
    return false;
  }
  if (isPlainObject(schema)) return true;
  issues.add(`must be a JSON Schema object for kind ${kind}, got ${jsonTypeName(schema)}`);
  return false;
}

function checkRequired(required: unknown, properties: Record<string, unknown>, issues: IssueCollector): void {
  if (!checkArray(required, issues)) return;
  const seen = new Set<string>();
  required.forEach((name, index) => {
    if (typeof name !== 'string') issues.add(`must be a parameter name, got ${jsonTypeName(name)}`, index);
    else if (seen.has(name)) issues.add(`duplicate parameter ${JSON.stringify(name)}`, index);
    else if (!Object.hasOwn(properties, name)) issues.add(`names no entry of properties: ${JSON.stringify(name)}`, index);
    seen.add(typeof name === 'string' ? name : '');
  });
}

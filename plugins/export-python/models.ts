/**
 * `_models.py`: one dataclass per object schema of the app (TypeMapper
 * collects them), with the same fields as the JSON. A JSON key that is not an
 * identifier keeps its key in the field's metadata (`{"json": "first-name"}`),
 * which the runtime reads both ways; a field that is neither required nor
 * defaulted is None and left out of the JSON it sends.
 */
import { pyDocstring, pyString } from './names.js';
import type { Model, ModelField } from './schema-types.js';

export function renderModels(models: readonly Model[], header: string, app: string): string {
  const names = new Set(models.map((model) => model.name));
  const classes = models.map((model) => renderModel(model, names));
  return `${[
    `${header}"""The JSON objects the workloads of ${app} take and answer, as dataclasses."""`,
    '',
    // Annotations stay strings: classes may refer to each other in any order, and to themselves.
    'from __future__ import annotations',
    '',
    // Only what the classes use: strict checkers call an unused import an error.
    ...(classes.length > 0 ? ['import dataclasses as _dc'] : []),
    ...(classes.some((text) => text.includes('typing.')) ? ['import typing'] : []),
    '',
    `__all__ = [${models.map((model) => pyString(model.name)).join(', ')}]`,
    ...classes.flatMap((text) => ['', '', text]),
  ].join('\n')}\n`;
}

function renderModel(model: Model, classNames: ReadonlySet<string>): string {
  const lines = [model.kwOnly ? '@_dc.dataclass(kw_only=True)' : '@_dc.dataclass', `class ${model.name}:`];
  if (model.doc !== null) lines.push(pyDocstring(model.doc, '    '), '');
  const taken = new Set(model.fields.map((field) => field.name));
  for (const field of model.fields) {
    // A field named like a class would hide it from the annotations of the fields after it.
    let name = field.name;
    while (classNames.has(name) || (name !== field.name && taken.has(name))) name = `${name}_`;
    taken.add(name);
    lines.push(`    ${name}: ${field.type}${defaultOf({ ...field, name })}`);
  }
  if (model.fields.length === 0) lines.push('    pass');
  return lines.join('\n');
}

function defaultOf(field: ModelField): string {
  const metadata: string[] = [];
  if (field.key !== field.name) metadata.push(`"json": ${pyString(field.key)}`);
  if (field.omitWhenNone) metadata.push('"omit_none": True');
  const given = field.default;
  if (metadata.length === 0 && (given === null || !given.factory)) return given === null ? '' : ` = ${given.literal}`;
  const parts: string[] = [];
  if (given !== null) parts.push(given.factory ? `default_factory=lambda: ${given.literal}` : `default=${given.literal}`);
  if (metadata.length > 0) parts.push(`metadata={${metadata.join(', ')}}`);
  return ` = _dc.field(${parts.join(', ')})`;
}

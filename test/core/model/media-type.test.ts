import assert from 'node:assert/strict';
import { isJsonMediaType } from '../../../core/model/media-type.js';

describe('isJsonMediaType (the normalizer and both exporters)', () => {
  it('takes application/json and +json types, with parameters, in any case', () => {
    for (const type of [
      'application/json',
      'Application/JSON',
      'application/json; charset=utf-8',
      'application/problem+json',
      'application/vnd.api+json;v=1',
    ]) {
      assert.equal(isJsonMediaType(type), true, type);
    }
  });

  it('leaves out types that only begin like JSON, and others', () => {
    for (const type of [
      'application/json-seq',
      'application/jsonl',
      'application/x-ndjson',
      'text/json',
      'application/xml',
      'multipart/form-data',
    ]) {
      assert.equal(isJsonMediaType(type), false, type);
    }
  });
});

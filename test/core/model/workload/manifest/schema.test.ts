import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { manifestSchemaText } from '../../../../../core/model/workload/manifest/schema.js';
import { packageRoot } from '../../../../../core/model/paths.js';
import { sampleManifest } from './sample-manifest.js';

const published = readFileSync(path.join(packageRoot, 'docs', 'manifest.schema.json'), 'utf8');

describe('docs/manifest.schema.json', () => {
  it('is what core/model/workload/manifest/schema.ts declares', () => {
    assert.ok(
      published === manifestSchemaText(),
      'docs/manifest.schema.json is stale: it is generated from core/model/workload/manifest/schema.ts, so change that and run `npm run manifest-schema`.',
    );
  });

  it('works in a JSON Schema validator that knows nothing of svc: accepts a manifest, refuses a broken one', () => {
    // Without svc's checks (x-svc-check), only what the standard keywords say is checked.
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(JSON.parse(published));
    assert.equal(validate(sampleManifest()), true, JSON.stringify(validate.errors));
    const broken = sampleManifest() as any;
    broken.workloads[1].options.workers = 65;
    delete broken.workloads[2].options.openapi;
    broken.images[0].python_version = '3';
    assert.equal(validate(broken), false);
    assert.deepEqual(validate.errors?.map((error) => `${error.instancePath} ${error.keyword}`).sort(), [
      '/images/0/python_version pattern',
      '/workloads/1 if', // the kind's part of the schema failed
      '/workloads/1/options/workers maximum',
      '/workloads/2 if',
      '/workloads/2/options required',
    ]);
  });
});

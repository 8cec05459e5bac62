/**
 * `npm run manifest-schema`: writes docs/manifest.schema.json from the schema
 * declared in core/model/workload/manifest/schema.ts. test/core/model/workload/manifest/schema.test.ts fails while the file differs.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../paths.js';
import { manifestSchemaText } from './schema.js';

writeFileSync(path.join(packageRoot, 'docs', 'manifest.schema.json'), manifestSchemaText());

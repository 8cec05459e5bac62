/**
 * `npm run openapi`: writes docs/openapi.json from the route declarations
 * (core/http/api/openapi.ts), so that the file never says what the code does not.
 * test/core/http/api/openapi.test.ts fails while the file differs.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../model/paths.js';
import { apiRoutes } from './index.js';
import { openApiDocument, openApiText } from './openapi.js';

writeFileSync(path.join(packageRoot, 'docs', 'openapi.json'), openApiText(openApiDocument(apiRoutes)));

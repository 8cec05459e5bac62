/**
 * ASGI apps: one typed method per operation of the app's OpenAPI
 * description, when the deploy read one (operations.ts), and always the
 * generic `request(method, path, json=, data=, headers=, params=)` of the SDK
 * (returning the response as it came) for what the description does not
 * cover, plus `connect(path)` for the app's WebSocket routes. Those two come
 * from `_rt.Asgi`.
 */
import type { InterfaceWorkload } from 'svc/plugin';
import { common, type WorkloadNames } from './endpoint.js';
import { pyDocstring } from './names.js';
import { renderOperations } from './operations.js';
import type { TypeMapper } from './schema-types.js';

export function renderAsgi(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): string {
  const where = `${names.app}/${workload.name}`;
  // `?? null`: an interface from a server older than the field has none.
  const api = workload.api ?? null;
  const operations = api === null ? null : renderOperations(api, mapper, names.hint, where);
  const typed =
    operations === null || operations.names.length === 0
      ? `It published no OpenAPI description when it was deployed${api === null ? '' : ' with any operation'}: request() reaches every route.`
      : `One method per operation of its OpenAPI description, read when it was deployed: ${operations.names.map((n) => `${n}()`).join(', ')}.`;
  const about = `The ASGI app ${workload.name} of ${names.app}: every route of the app, under its URL.\n\n${typed}\nrequest(method, path, json=, data=, headers=, params=) sends one HTTP request and returns the response;\nconnect(path) opens one of its WebSocket routes.`;
  return [
    `class ${names.cls}(_rt.Asgi):`,
    pyDocstring(workload.doc === null ? about : `${workload.doc}\n\n${about}`, '    '),
    ...(operations?.methods ?? []).flatMap((method) => ['', method]),
    '',
    '',
    `${names.object} = ${names.cls}(`,
    ...common(workload, names),
    ')',
  ].join('\n');
}

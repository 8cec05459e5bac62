/**
 * ASGI apps: the routes are the app's own business, so the object keeps the
 * generic `request(method, path, json=, data=, headers=, params=)` of the SDK
 * (returning the response as it came), plus `connect(path)` for the app's
 * WebSocket routes. Both come from `_rt.Asgi`; only the docstring is generated.
 */
import type { InterfaceWorkload } from 'svc/plugin';
import { common, type WorkloadNames } from './endpoint.js';
import { pyDocstring } from './names.js';

export function renderAsgi(workload: InterfaceWorkload, names: WorkloadNames): string {
  const about = `The ASGI app ${workload.name} of ${names.app}: every route of the app, under its URL.\n\nrequest(method, path, json=, data=, headers=, params=) sends one HTTP request and returns the response;\nconnect(path) opens one of its WebSocket routes.`;
  return [
    `class ${names.cls}(_rt.Asgi):`,
    pyDocstring(workload.doc === null ? about : `${workload.doc}\n\n${about}`, '    '),
    '',
    '',
    `${names.object} = ${names.cls}(`,
    ...common(workload, names),
    ')',
  ].join('\n');
}

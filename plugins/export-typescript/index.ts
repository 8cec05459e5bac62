/**
 * svc:export-typescript — the built-in client exporter `typescript`: a typed
 * ESM package per deployed app, `svc-clients/<app>/` (`@svc-clients/<app>`),
 * JavaScript with hand-rendered declarations, nothing but fetch and
 * WebSocket at run time. Built on the public plugin API only.
 */
import { PLUGIN_API_VERSION, type ClientExporter, type Plugin } from 'svc/plugin';
import { exportTypeScript } from './layout.js';

export { CLIENTS_FOLDER, CLIENTS_SCOPE, GENERATED_MARK } from './layout.js';

/** The name `svc app export --language` picks. */
export const TYPESCRIPT_EXPORTER = 'typescript';

export const typescriptExporter: ClientExporter = {
  language: 'TypeScript (ESM, Node 20+ and browsers)',
  description:
    'a typed ESM package @svc-clients/<app> (JavaScript and .d.ts): one object per workload, a method per ASGI operation, fetch and WebSocket only',
  export: exportTypeScript,
};

export default function exportTypeScriptPlugin(): Plugin {
  return {
    name: 'svc:export-typescript',
    apiVersion: PLUGIN_API_VERSION,
    exporters: { [TYPESCRIPT_EXPORTER]: typescriptExporter },
  };
}

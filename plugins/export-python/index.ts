/**
 * svc:export-python — the built-in client exporter `python`: a typed Python
 * package per deployed app, imported as `svc_clients.<app>` (`svc app export`).
 * Built on the public plugin API only, like any third-party exporter.
 */
import { PLUGIN_API_VERSION, type ClientExporter, type Plugin } from 'svc/plugin';
import { exportPython } from './layout.js';

export { CLIENTS_PACKAGE, GENERATED_MARK } from './layout.js';

/** The name `svc app export --language` picks (its default). */
export const PYTHON_EXPORTER = 'python';

export const pythonExporter: ClientExporter = {
  language: 'Python 3.10+',
  description: 'a typed package svc_clients.<app>: one object per workload, dataclasses for the JSON, the svc SDK for calls',
  export: exportPython,
};

export default function exportPythonPlugin(): Plugin {
  return {
    name: 'svc:export-python',
    apiVersion: PLUGIN_API_VERSION,
    exporters: { [PYTHON_EXPORTER]: pythonExporter },
  };
}

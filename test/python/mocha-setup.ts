/**
 * Loaded by mocha (`.mocharc.json` "require") before any test file, in the
 * main process and in every parallel worker: builds the tests' own Python
 * when it is missing (test/python/env.ts) and points `SVC_PYTHON` at it, so
 * that test files, the code they test and the processes they spawn use it;
 * then builds the shared runtime layer when the cache lacks it
 * (test/python/runtime-layer.ts): the main process runs this first, so the
 * workers find both ready.
 */
import { ensureTestPython } from './env.js';
import { ensureRuntimeLayer } from './runtime-layer.js';

process.env.SVC_PYTHON = await ensureTestPython();
await ensureRuntimeLayer(process.env.SVC_PYTHON);

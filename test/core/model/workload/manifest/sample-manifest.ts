/**
 * A valid Manifest v1 with one workload of every kind, written by hand from
 * docs/manifest.md. Image ids were computed with Python's json + hashlib, so
 * the tests also pin the cross-language content address.
 */
import type { ManifestV1 } from '../../../../../core/model/workload/manifest/types.js';

export const plainImageId = 'img-61363a1857b77906'; // 3.11, no packages
export const numpyImageId = 'img-c571f9c62b239f5b'; // 3.12, numpy==1.26 + requests>=2

export function sampleManifest(): ManifestV1 {
  const autoscaler = { max_containers: 1, tasks_per_container: 1, min_containers: 0 };
  return {
    manifest_version: 1,
    sdk_version: '0.1.0',
    entry: 'app',
    app: { name: 'sample' },
    images: [
      { id: plainImageId, python_version: '3.11', python_packages: [] },
      { id: numpyImageId, python_version: '3.12', python_packages: ['numpy==1.26', 'requests>=2'] },
    ],
    workloads: [
      {
        name: 'square',
        kind: 'function',
        handler: 'square',
        image: numpyImageId,
        doc: null,
        options: { cpu: 0.5, memory: '2Gi', on_start: null },
        parameters: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'], additionalProperties: false },
        returns: { type: 'integer' },
      },
      {
        name: 'greet',
        kind: 'endpoint',
        handler: 'greet',
        image: plainImageId,
        doc: 'Greets someone by name.',
        options: {
          cpu: 1.0,
          memory: '512Mi',
          route: '/greet',
          methods: ['POST'],
          workers: 2,
          concurrency: 4,
          autoscaler: { max_containers: 5, tasks_per_container: 8, min_containers: 1 },
          max_pending_tasks: 50,
          checkpoint_enabled: true,
          authorized: false,
          domain: 'api.example.com',
          keep_warm: 120,
          on_start: 'load_model',
        },
        parameters: {
          type: 'object',
          properties: { name: { type: 'string' }, polite: { type: 'boolean', default: true } },
          required: ['name'],
          additionalProperties: false,
        },
        returns: { type: 'object', title: 'Greeting', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      {
        name: 'web',
        kind: 'asgi',
        handler: null,
        image: plainImageId,
        doc: null,
        options: {
          cpu: 2,
          memory: '1Gi',
          workers: 1,
          concurrent_requests: 100,
          autoscaler,
          max_pending_tasks: 100,
          checkpoint_enabled: false,
          authorized: true,
          domain: null,
          keep_warm_seconds: 300,
          on_start: null,
          openapi: '/openapi.json',
        },
        parameters: null,
        returns: null,
      },
      {
        name: 'chat',
        kind: 'realtime',
        handler: 'Chat.on_message',
        image: plainImageId,
        doc: 'Echoes messages.',
        options: {
          cpu: 0.25,
          memory: '256Mi',
          workers: 3,
          concurrent_requests: 10,
          autoscaler,
          max_pending_tasks: 0,
          checkpoint_enabled: false,
          authorized: true,
          domain: null,
          keep_warm_seconds: 0,
          on_start: 'Chat.<locals>.connect',
        },
        parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
        returns: { type: 'array', items: { type: 'string' }, 'x-svc-stream': true },
      },
    ],
  };
}

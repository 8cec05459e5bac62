import { DEFAULT_RUN_LIMITS } from '../../core/services/runs/limits.js';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clusterDefaults } from '../../config/cluster-schema.js';
import { secretsDefaults } from '../../config/secrets-schema.js';
import { tlsDefaults } from '../../config/tls-schema.js';
import { DEFAULT_CALL_RESULT_TTL_SECONDS } from '../../core/services/calls/calls.js';
import {
  DEFAULT_QUEUE_TIMEOUT_SECONDS,
  DEFAULT_SCALING_POLICY,
  DEFAULT_VOLUME_MAX_BYTES,
  DEFAULT_WORKSPACE_VOLUME_BYTES,
  type ServerConfig,
} from '../../config/schema.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../core/traffic/gateway/body-limit.js';
import { packageRoot } from '../../core/model/paths.js';

/**
 * Image environments are shared by every test run (building one takes
 * seconds); each test gets its own data dir.
 */
export const testCacheDir = process.env.SVC_CACHE_DIR ?? path.join(packageRoot, '.cache', 'svc');

export function tempDir(prefix = 'svc-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The secrets key of tests that keep their state in Consul, which refuses to start without one (base64 of 32 bytes). */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

export function testConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    dataDir: tempDir('svc-data-'),
    cacheDir: testCacheDir,
    python: process.env.SVC_PYTHON ?? 'python3',
    imageInstaller: 'auto',
    imageBytecode: 'background',
    uvPath: null,
    publicUrl: null,
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    baseDomain: null,
    dnsResolver: null,
    queueTimeoutSeconds: DEFAULT_QUEUE_TIMEOUT_SECONDS,
    callResultTtlSeconds: DEFAULT_CALL_RESULT_TTL_SECONDS,
    maxRunsPerWorkspace: DEFAULT_RUN_LIMITS.perWorkspace,
    classParameterSets: DEFAULT_RUN_LIMITS.parameterSetsPerClass,
    workspaceQuotas: {},
    usagePrices: null,
    usageRetentionDays: 90,
    volumeMaxBytes: DEFAULT_VOLUME_MAX_BYTES,
    workspaceVolumeBytes: DEFAULT_WORKSPACE_VOLUME_BYTES,
    callbackAllowPrivate: false,
    scalingPolicy: DEFAULT_SCALING_POLICY,
    plugins: [],
    cgroupRoot: null,
    metricsAddress: null,
    gpuInventory: null,
    ...clusterDefaults(),
    ...tlsDefaults(),
    ...secretsDefaults(),
    ...overrides,
  };
}

export const quickstartApp = path.join(packageRoot, 'examples', 'quickstart', 'app.py');

import type { Platform } from '../../core/platform/platform.js';
import type { LocalDriver } from '../../core/infra/scheduler/local/driver.js';

/** The platform's driver as the local one (the tests' default config); throws on another scheduler. */
export function localDriverOf(platform: Pick<Platform, 'driver'>): LocalDriver {
  if (platform.driver.name !== 'local') throw new Error(`expected the local driver, the platform runs ${platform.driver.name}`);
  return platform.driver as LocalDriver;
}

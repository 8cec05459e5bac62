/**
 * Real servers from Debian that some tests run (dnsmasq, prometheus): a test
 * skips, saying so, where its binary is missing; on CI (`CI=true`) it fails
 * instead, since .ci/run installs them.
 */
import { existsSync } from 'node:fs';

export interface DebianTool {
  /** The Debian package that installs it. */
  readonly package: string;
  /** Where it is: the variable that moves it, or its Debian path. */
  readonly bin: string;
  readonly variable: string;
}

export function requireDebianTool(context: Mocha.Context, tool: DebianTool): void {
  if (existsSync(tool.bin)) return;
  if (process.env.CI === 'true')
    throw new Error(`${tool.package} is missing at ${tool.bin}: .ci/run installs it (apt-get install ${tool.package})`);
  console.log(`      skipped: ${tool.package} is missing at ${tool.bin} (apt-get install ${tool.package}, or set ${tool.variable})`);
  context.skip();
}

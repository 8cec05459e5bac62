/**
 * A real Chromium for the dashboard's tests: Debian's (`.ci/run` installs
 * it), or the one `CHROMIUM_BIN` names, driven by playwright-core, headless
 * and offline. Without one the browser tests say so and are skipped; on CI
 * (`CI=true`) a missing browser fails them instead.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { packageRoot } from '../../core/model/paths.js';

export const chromiumPath = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';

/** Where screenshots of every page go (not committed). */
export const screenshotDir = path.join(packageRoot, '.cache', 'test-output', 'dashboard');

/** Skips the suite (or fails it on CI) when there is no Chromium. Call in `before`. */
export function needChromium(context: Mocha.Context): void {
  if (existsSync(chromiumPath)) return;
  const why = `no Chromium at ${chromiumPath}: install Debian's chromium (apt install chromium) or set CHROMIUM_BIN`;
  if (process.env.CI === 'true') throw new Error(why);
  console.warn(`  skipped: ${why}`);
  context.skip();
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    // A fresh profile each launch: playwright gives every launch() a new temporary --user-data-dir itself.
  });
}

/** A screenshot of the whole page, named after it. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true });
}

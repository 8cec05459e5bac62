/**
 * The dashboard's stylesheet and script, served from the package itself
 * (never a CDN), read once at start and cached by browsers for an hour.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../model/paths.js';
import { securityHeaders } from './respond.js';
import type { Context } from './session-cookie.js';

const ASSETS: Readonly<Record<string, { readonly file: string; readonly type: string }>> = {
  'dashboard.css': { file: 'dashboard.css', type: 'text/css; charset=utf-8' },
  'dashboard.js': { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
};

export function assetFiles() {
  const loaded = new Map(
    Object.entries(ASSETS).map(([name, asset]) => [
      name,
      { ...asset, body: readFileSync(path.join(packageRoot, 'core/http/dashboard/assets', asset.file)) },
    ]),
  );
  return (ctx: Context & { params: Record<string, string> }): boolean => {
    const asset = loaded.get(ctx.params.name ?? '');
    if (asset === undefined) return false;
    securityHeaders(ctx);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = asset.type;
    ctx.body = asset.body;
    return true;
  };
}

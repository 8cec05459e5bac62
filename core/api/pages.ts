/**
 * Placeholders for the two pages links point at until the dashboard exists:
 * `/device` (the device flow's verification_uri) and `/login` (first-start
 * sign-in links, `/login#<secret>`). Each says how to do the same with the
 * API. Static HTML without scripts, styles or user input.
 */
import type { Middleware } from 'koa';
import type { GatewayState } from '../gateway/types.js';
import { API_PREFIX } from './types.js';

const PAGES: Readonly<Record<string, { title: string; body: string }>> = {
  '/device': {
    title: 'Approve a sign-in',
    body: `<p>The svc dashboard (where you will approve <code>svc login</code>) is not part of this version yet.</p>
<p>Approve the code your terminal shows with a token of your workspace:</p>
<pre>curl -X POST -H "Authorization: Bearer $SVC_TOKEN" -H "Content-Type: application/json" \\
  -d '{"user_code": "XXXX-XXXX"}' &lt;this server&gt;${API_PREFIX}/device/approve</pre>`,
  },
  '/login': {
    title: 'Sign in',
    body: `<p>The svc dashboard is not part of this version yet.</p>
<p>Trade the part of your sign-in link after <code>#</code> for a session token (the link works once):</p>
<pre>curl -X POST -H "Content-Type: application/json" \\
  -d '{"secret": "&lt;the part after #&gt;"}' &lt;this server&gt;${API_PREFIX}/sign-in</pre>`,
  },
};

export function placeholderPages(): Middleware<GatewayState> {
  return async (ctx, next) => {
    const page = PAGES[ctx.path];
    if (page === undefined || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.set('Content-Security-Policy', "default-src 'none'");
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc — ${page.title}</title></head>
<body><h1>${page.title}</h1>
${page.body}
<p>See docs/api.md.</p></body></html>
`;
  };
}

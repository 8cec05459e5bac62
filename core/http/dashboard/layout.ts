/**
 * The page shell every dashboard page shares: skip link, navigation, the
 * workspace and account, sign-out. Styles and the one script are files the
 * package serves itself (core/http/dashboard/assets), so the Content-Security-Policy
 * allows nothing from elsewhere and no inline code.
 */
import { randomBytes } from 'node:crypto';
import { html, type Html } from './html.js';
import type { Viewer } from './types.js';

export interface PageOptions {
  readonly title: string;
  readonly body: Html;
  /** Null on the pages of someone not signed in (sign-in, errors before it). */
  readonly viewer: Viewer | null;
  /** Which navigation entry is this page. */
  readonly section?: 'apps' | 'volumes' | 'usage' | 'tokens' | 'secrets' | 'workspace';
}

const NAV = [
  { section: 'apps', href: '/dashboard', label: 'Apps' },
  { section: 'volumes', href: '/dashboard/volumes', label: 'Volumes' },
  { section: 'usage', href: '/dashboard/usage', label: 'Usage' },
  { section: 'tokens', href: '/dashboard/settings/tokens', label: 'Settings → Tokens' },
  { section: 'secrets', href: '/dashboard/settings/secrets', label: 'Settings → Secrets' },
  { section: 'workspace', href: '/dashboard/workspace', label: 'Workspace' },
] as const;

export function page({ title, body, viewer, section }: PageOptions): string {
  const header =
    viewer === null
      ? html`<header class="top"><span class="brand">svc</span></header>`
      : html`<header class="top">
  <span class="brand">svc</span>
  <nav aria-label="Dashboard">
    <ul>${NAV.map((entry) => html`<li><a href="${entry.href}"${entry.section === section ? html` aria-current="page"` : ''}>${entry.label}</a></li>`)}</ul>
  </nav>
  <div class="who">
    <span>Workspace <strong>${viewer.session.workspace}</strong></span>
    <span>${viewer.account.name}</span>
    <form method="post" action="/logout">${csrfField(viewer)}<button type="submit" class="link">Sign out</button></form>
  </div>
</header>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · svc</title>
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${header}
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.text;
}

/** A one-time id for a form whose effect must not happen twice (a reload of its answer page sends it again). */
export function onceField(): Html {
  return html`<input type="hidden" name="_once" value="${randomBytes(16).toString('hex')}">`;
}

/** The hidden field every state-changing form of a signed-in page carries. */
export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${viewer.session.csrf}">`;
}

/** A notice at the top of a page: `status` for news, `alert` for a failure (read out by screen readers). */
export function notice(kind: 'ok' | 'error', text: Html | string): Html {
  return html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}

/** The page body that asks before a destructive form is sent: the question, the danger button posting to `action`, and Cancel. */
export function confirmCard(viewer: Viewer, question: Html, action: string, button: string, cancel: string): Html {
  return html`<div class="card">
  <p>${question}</p>
  <form method="post" action="${action}" class="actions">
    ${csrfField(viewer)}
    <button type="submit" class="danger">${button}</button>
    <a href="${cancel}">Cancel</a>
  </form>
</div>`;
}

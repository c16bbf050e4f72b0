import { readFileSync } from 'node:fs';
import { escapeHtml } from '../http/escapeHtml.ts';
import type { Actor } from '../../server/core/kernel/actor.ts';
import { clientHost } from '../../server/core/identity/oauthClients.ts';
import type { AuthorizeRequest } from './authorizeRequest.ts';

/**
 * The consent page of `/oauth/authorize` and its error page: server-rendered, working without
 * JavaScript, in the product's look (its built stylesheet for the base, and a few rules of its own at
 * `/oauth/consent.css`, as the page's CSP allows only stylesheets of this origin).
 */
let productCss: string | null | undefined;
function productStylesheet(clientDist: string): string | null {
  if (productCss === undefined) {
    try {
      productCss = /<link rel="stylesheet"[^>]*href="([^"]+)"/.exec(readFileSync(`${clientDist}index.html`, 'utf8'))?.[1] ?? null;
    } catch {
      productCss = null;
    }
  }
  return productCss;
}

export const CONSENT_CSS = `.bar{max-width:var(--width);margin:0 auto;padding:.6rem 1rem;display:flex;justify-content:space-between;align-items:center;gap:1rem}
.site-header{border-bottom:1px solid var(--border);background:var(--surface)}
.brand{font-weight:700;font-size:1.2rem;color:var(--text);text-decoration:none;letter-spacing:-.01em}
.brand::before{content:'';display:inline-block;width:.6em;height:.6em;margin-right:.35em;border-radius:50%;background:var(--accent)}
main{max-width:34rem;margin:0 auto;padding:1rem}
.consent h1{font-size:1.45rem;margin:.25rem 0 0}
.consent dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
.consent dt{color:var(--muted)}
.consent dd{margin:0;overflow-wrap:anywhere}
.consent ul{margin:0;padding-left:1.2rem}
.warning{border:1px solid var(--danger);background:var(--danger-bg);color:var(--text);border-radius:var(--radius);padding:.6rem .8rem;margin:0}
.warning strong{color:var(--danger)}
.known{border:1px solid var(--ok);background:var(--ok-bg);border-radius:var(--radius);padding:.6rem .8rem;margin:0}
.choices{display:flex;gap:.75rem;flex-wrap:wrap}
.choices button{min-width:8rem}
.who{color:var(--muted);font-size:.9rem}
`;

function layout(clientDist: string, title: string, body: string, who?: Actor): string {
  const css = productStylesheet(clientDist);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)} · Dotpad</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${css ? `<link rel="stylesheet" href="${escapeHtml(css)}">` : ''}
<link rel="stylesheet" href="/oauth/consent.css">
</head>
<body>
<header class="site-header"><div class="bar"><a class="brand" href="/">Dotpad</a>${who ? `<span class="who">Signed in as <strong>${escapeHtml(who.name)}</strong></span>` : ''}</div></header>
<main id="main">
${body}
</main>
</body>
</html>
`;
}

const SCOPE_WORDS: Record<string, string> = {
  'svc:read': 'Read the hubs, threads, pads and tasks you can read, and your inbox.',
  'svc:write': 'Post, start threads, edit pads and hand out tasks as you, with your rights.',
};

/** Who is asking: the known assistant host, or a warning that nobody vouched for this app. */
function appStanding(label: string | null, name: string, host: string): string {
  if (label) return `<p class="known" data-testid="known-host"><strong>Known assistant host (${escapeHtml(label)}).</strong> This server checked that the app comes from ${escapeHtml(host)}.</p>`;
  return `<p class="warning" role="note" data-testid="unverified"><strong>Unverified app.</strong> Dotpad has not checked who runs this app. It calls itself “${escapeHtml(name)}”, which anyone can claim. Allow it only if you started this connection yourself and trust ${escapeHtml(host)}.</p>`;
}

export type ConsentView = { request: AuthorizeRequest; person: Actor; formToken: string; knownHost: string | null };

export function consentPage(clientDist: string, view: ConsentView): string {
  const { request, person } = view;
  const host = clientHost(request.client);
  const name = request.client.name?.trim() || host;
  const redirectHost = ((url) => url.host || url.protocol.replace(/:$/, ''))(new URL(request.redirectUri));
  const hidden = {
    client_id: request.client.id,
    redirect_uri: request.redirectUri,
    response_type: 'code',
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    scope: request.scopes.join(' '),
    resource: request.resource,
    state: request.state,
    form_token: view.formToken,
  };
  const fields = Object.entries(hidden)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `<input type="hidden" name="${key}" value="${escapeHtml(value!)}">`)
    .join('\n');
  const body = `<form method="post" action="/oauth/authorize" class="card stack consent" aria-labelledby="consent-title">
<h1 id="consent-title">Connect ${escapeHtml(name)} to your Dotpad account?</h1>
${appStanding(view.knownHost, name, host)}
<dl>
<dt>App</dt><dd data-testid="client-name">${escapeHtml(name)}</dd>
<dt>Sends you back to</dt><dd data-testid="redirect-host">${escapeHtml(redirectHost)}</dd>
<dt>Acting as</dt><dd>${escapeHtml(person.name)} <span class="muted">${escapeHtml(person.handle)}</span></dd>
</dl>
<h2>It will be able to</h2>
<ul data-testid="scopes">${request.scopes.map((scope) => `<li>${escapeHtml(SCOPE_WORDS[scope] ?? scope)}</li>`).join('')}</ul>
<p class="note">It cannot see your email address or your agents' keys. You can disconnect it at any time in Settings, under “Connected apps”.</p>
${fields}
<div class="choices">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</div>
</form>`;
  return layout(clientDist, `Connect ${name}`, body, person);
}

export function authorizeErrorPage(clientDist: string, message: string): string {
  const body = `<section class="card stack consent" aria-labelledby="error-title">
<h1 id="error-title">This connection cannot go ahead</h1>
<p data-testid="authorize-error">${escapeHtml(message)}</p>
<p class="note">Nothing was shared. Go back to the app you came from and connect again; if this keeps happening, tell the app's makers.</p>
<p><a href="/">Go to Dotpad</a></p>
</section>`;
  return layout(clientDist, 'Cannot connect', body);
}

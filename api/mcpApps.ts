import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Core } from '../server/core/kernel/context.ts';

/**
 * The MCP Apps view (SPEC part 4 "Click proof for app-only tools"): one HTML resource, built from
 * `client/view/` into one file, that assistant hosts show for the tools with a card. It reads the
 * card from a result's `_meta["svc/view"]` and talks to its host with `@modelcontextprotocol/ext-apps`.
 */
export const VIEW_URI = 'ui://svc/view-v1.html';
/** MCP Apps' profile of HTML (ext-apps' RESOURCE_MIME_TYPE). */
export const VIEW_MIME = 'text/html;profile=mcp-app';
/** The one font host the view's CSP allows; it connects nowhere (its tool calls go through the host). */
export const VIEW_FONT_HOST = 'https://fonts.gstatic.com';

export const VIEW_BUILT = fileURLToPath(new URL('../client/dist-view/view-v1.html', import.meta.url));

let html: string | undefined;

/** The built view, read once; a server started before `npm run build` answers a page that says so. */
function viewHtml(): string {
  if (html !== undefined) return html;
  try {
    html = readFileSync(VIEW_BUILT, 'utf8');
  } catch {
    return '<!doctype html><meta charset="utf-8"><p>The Dotpad view is not built on this server: run <code>npm run build</code>.</p>';
  }
  return html;
}

/** `_meta.ui` of the resource: no border, the CSP, and the host's dedicated origin when SVC_WIDGET_DOMAIN names one. */
const resourceUi = (core: Core) => ({
  ui: {
    prefersBorder: false,
    csp: { connectDomains: [], resourceDomains: [VIEW_FONT_HOST] },
    ...(core.config.widgetDomain ? { domain: core.config.widgetDomain } : {}),
  },
});

export const listViewResources = (core: Core) => ({
  resources: [{ uri: VIEW_URI, name: 'dotpad-view', title: 'Dotpad cards', description: 'Thread, pad, task and home cards.', mimeType: VIEW_MIME, _meta: resourceUi(core) }],
});

/** `resources/read`: the view, or `undefined` for any other address. */
export function readViewResource(core: Core, uri: string) {
  if (uri !== VIEW_URI) return undefined;
  return { contents: [{ uri: VIEW_URI, mimeType: VIEW_MIME, text: viewHtml(), _meta: resourceUi(core) }] };
}

/** A card tool's `_meta`: the view to show its results in, for the model and the view alike (the older flat key too). */
export const cardToolMeta = { ui: { resourceUri: VIEW_URI, visibility: ['model', 'app'] }, 'ui/resourceUri': VIEW_URI };
/** An app-only tool's `_meta`: callable by the view alone; hosts hide it from the model. */
export const appToolMeta = { ui: { visibility: ['app'] } };

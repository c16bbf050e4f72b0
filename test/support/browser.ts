import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CONDITION_MS } from './patience.ts';
import { signIn, type Reachable } from './server.ts';

/**
 * What the browser suites share: Debian's Chromium driven by playwright-core (never a downloaded
 * browser), the client built when it is older than its sources, and a signed-in person's page.
 */
export const CHROMIUM = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST_INDEX = join(ROOT, 'client/dist/index.html');

export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI === 'true') {
  throw new Error(`CI=true needs Chromium at ${CHROMIUM}: the browser suites may not be skipped.`);
}

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/**
 * The server serves client/dist (and the MCP Apps view, client/dist-view) as it finds them at start,
 * so build each when missing or older than its sources.
 */
export function ensureClientBuilt() {
  buildWhenOlder(DIST_INDEX, 'client/vite.config.ts', ['client/src', 'client/public', 'client/index.html', 'client/vite.config.ts', 'schema/pad.ts', 'schema/callers.ts']);
  buildWhenOlder(join(ROOT, 'client/dist-view/view-v1.html'), 'client/view/vite.config.ts', ['client/view', 'schema/tools', 'schema/callers.ts']);
}

function buildWhenOlder(built: string, config: string, sourcePaths: readonly string[]) {
  const sources = sourcePaths.map((p) => join(ROOT, p)).filter(existsSync);
  if (existsSync(built) && statSync(built).mtimeMs >= Math.max(...sources.map(newestMtime))) return;
  const run = spawnSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', config, '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`build of ${config} failed:\n${run.stdout}\n${run.stderr}`);
}

export const LAUNCH_ARGS = [
  ...['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  // Pages that must behave as if in front: Chromium holds back animation frames and timers of windows it deems in the background.
  ...['--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows', '--disable-background-timer-throttling'],
];

export const launchBrowser = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });

/** A fresh browser context on the server, signed out; its waits (clicks, navigations) end at the generous bound of test/support/patience.ts. */
export async function browserContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL });
  context.setDefaultTimeout(CONDITION_MS);
  return context;
}

/** A signed-in person's browser: the session cookie from the real sign-in, and every console error and failed response kept. */
export type BrowserPerson = { name: string; id: string; cookie: string; context: BrowserContext; page: Page; errors: string[] };

export async function personInBrowser(browser: Browser, server: Reachable, name: string, email = `${name.toLowerCase()}@example.test`): Promise<BrowserPerson> {
  const session = await signIn(server, name, email);
  const context = await browserContext(browser, server.url);
  const [cookieName, ...value] = session.cookie.split('=');
  await context.addCookies([{ name: cookieName!, value: value.join('='), url: server.url }]);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });
  return { name, id: session.id, cookie: session.cookie, context, page, errors };
}

/**
 * A signed-out visitor who jumps into a public thread that takes guests, under `name`, in a browser
 * context of their own (closed by the caller), and writes `reply` there.
 */
export async function guestReplies(browser: Browser, server: Reachable, threadId: string, name: string, reply: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browserContext(browser, server.url);
  const page = await context.newPage();
  await page.goto(`/t/${threadId}`);
  await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Jump in' }).click();
  await page.getByLabel('Your reply').fill(reply);
  await page.getByRole('button', { name: 'Post reply' }).click();
  return { context, page };
}

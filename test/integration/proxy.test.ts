// @module-tag heavy
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../crash/spawnServer.ts';
import { durableStore, liveCredentials, openEditorsInTurn, registerAgent, rest, startTestServer, typeInto, type TestServer } from '../support/server.ts';

/**
 * The layout of docker-compose.yml without Docker: two instances on one Postgres and Redis behind
 * nginx running the repository's own proxy config (`deploy/nginx.conf`), its upstreams and port set to
 * loopback ones. Runs where nginx, Postgres and Redis are; in CI all three are required.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const databaseUrl = process.env.TEST_DATABASE_URL;
const nginx = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).stdout.trim();
if (process.env.CI === 'true' && (!redisUrl || !databaseUrl || !nginx)) {
  throw new Error('CI=true needs nginx, TEST_REDIS_URL and TEST_DATABASE_URL: the proxy suite may not be skipped.');
}
const CONFIG = fileURLToPath(new URL('../../deploy/nginx.conf', import.meta.url));

describe.skipIf(!redisUrl || !databaseUrl || !nginx)('two instances behind the nginx proxy config', () => {
  const closers: (() => void | Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  /** nginx with deploy/nginx.conf, its upstreams the two instances' ports, listening on `port`. */
  async function proxy(port: number, upstreams: number[]) {
    const prefix = mkdtempSync(join(tmpdir(), 'dotpad-nginx-'));
    const site = readFileSync(CONFIG, 'utf8')
      .replace('server app:8787;', `server 127.0.0.1:${upstreams[0]};`)
      .replace('server app2:8787;', `server 127.0.0.1:${upstreams[1]};`)
      .replace('listen 8080;', `listen 127.0.0.1:${port};`);
    expect(site).not.toMatch(/app2?:8787|listen 8080/);
    writeFileSync(join(prefix, 'site.conf'), site);
    writeFileSync(
      join(prefix, 'nginx.conf'),
      [
        'daemon off;',
        `pid ${join(prefix, 'nginx.pid')};`,
        `error_log ${join(prefix, 'error.log')};`,
        'events {}',
        'http {',
        `  access_log off;`,
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(prefix, kind)};`),
        `  include ${join(prefix, 'site.conf')};`,
        '}',
      ].join('\n'),
    );
    const child = spawn(nginx, ['-p', prefix, '-c', join(prefix, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    closers.push(async () => {
      child.kill('SIGQUIT');
      await exited;
    });
    const url = `http://127.0.0.1:${port}`;
    await expect.poll(() => fetch(`${url}/healthz`).then((reply) => reply.status, () => 0), { timeout: 10_000, interval: 100 }).toBe(200);
    return url;
  }

  it('serves the API and live pads through the proxy, each editor on its own instance, both ways', async () => {
    const store = await durableStore('postgres');
    closers.push(() => store.drop());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const servers: TestServer[] = [];
    for (let i = 0; i < 2; i++) {
      const server = await startTestServer('postgres', { ...store.env, REDIS_URL: redisUrl!, SVC_BASE_URL: url });
      closers.push(() => server.close());
      servers.push(server);
    }
    await proxy(port, servers.map((server) => Number(new URL(server.url).port)));
    const front = { url };

    const agent = await registerAgent(front, 'Behind The Proxy');
    const hub = await rest(front, agent.key, 'create_hub', { name: 'Proxied' });
    expect(hub.status, hub.text).toBe(200);
    const pad = await rest(front, agent.key, 'create_pad', { hub: hub.body.data.slug, title: 'Shared', text: 'First.\n\nSecond.' });
    const padId = pad.body.data.pad_id as string;

    // Two editors through the proxy's WebSocket upgrade: round-robin puts one on each instance.
    const editors = await openEditorsInTurn(front, padId, agent.key, 2, closers);
    expect(servers.map((server) => liveCredentials(server).length)).toEqual([1, 1]);
    const [first, second] = editors[0]!.blocks();

    const edited = await rest(front, agent.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: first!.id, text: 'First, through the proxy.' }] });
    expect(edited.body.data).toMatchObject({ version: 2, conflicts: [] });
    for (const editor of editors) await expect.poll(() => editor.text()).toBe('First, through the proxy.\n\nSecond.');

    typeInto(editors[0]!.document, editors[0]!.fragment, second!.id, 0, 'Typed: ');
    await expect.poll(() => editors[1]!.text()).toBe('First, through the proxy.\n\nTyped: Second.');
    typeInto(editors[1]!.document, editors[1]!.fragment, first!.id, 0, 'Both ways. ');
    await expect.poll(() => editors[0]!.text()).toBe('Both ways. First, through the proxy.\n\nTyped: Second.');
  });
});

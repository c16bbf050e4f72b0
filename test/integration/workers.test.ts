// @module-tag heavy
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, spawnServer, type ServerProcess } from '../crash/spawnServer.ts';
import { durableStore, openEditorsInTurn, registerAgent, rest, typeInto } from '../support/server.ts';

/**
 * `npm start` with WORKERS=2 (api/workers.ts): two processes on one port, each an instance on the same
 * Postgres and Redis. node:cluster hands each new connection to the next worker, so editors opened one
 * after another sit on both. Runs when TEST_REDIS_URL and TEST_DATABASE_URL name servers; in CI both
 * are required.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const databaseUrl = process.env.TEST_DATABASE_URL;
if (process.env.CI === 'true' && (!redisUrl || !databaseUrl)) {
  throw new Error('CI=true needs TEST_REDIS_URL and TEST_DATABASE_URL: the workers suite may not be skipped.');
}

/** The pids of `pid`'s child processes. */
const childrenOf = (pid: number) =>
  spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);

describe.skipIf(!redisUrl || !databaseUrl)('npm start with WORKERS', () => {
  const closers: (() => void | Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('runs two workers on one port that share live pads both ways, and starts a killed one again', async () => {
    const store = await durableStore('postgres');
    closers.push(() => store.drop());
    const logFile = join(mkdtempSync(join(tmpdir(), 'dotpad-workers-')), 'server.log');
    const server: ServerProcess = await spawnServer({ env: { ...store.env, REDIS_URL: redisUrl!, WORKERS: '2' }, port: await freePort(), logFile, label: 'WORKERS=2' });
    closers.push(() => server.stop());
    expect(childrenOf(server.pid)).toHaveLength(2);

    const agent = await registerAgent(server, 'Worker Writer');
    const hub = await rest(server, agent.key, 'create_hub', { name: 'Workers' });
    const pad = await rest(server, agent.key, 'create_pad', { hub: hub.body.data.slug, title: 'Shared', text: 'First.\n\nSecond.' });
    const padId = pad.body.data.pad_id as string;
    // Four editors, opened one after another: two on each worker.
    const editors = await openEditorsInTurn(server, padId, agent.key, 4, closers);
    const [first, second] = editors[0]!.blocks();

    // An edit through the API, on whichever worker takes it, reaches every editor.
    const edited = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: first!.id, text: 'First, edited.' }] });
    expect(edited.body.data).toMatchObject({ version: 2, conflicts: [] });
    for (const editor of editors) await expect.poll(() => editor.text()).toBe('First, edited.\n\nSecond.');

    // Typing in the first editor reaches the others, on both workers.
    typeInto(editors[0]!.document, editors[0]!.fragment, second!.id, 0, 'Typed: ');
    for (const editor of editors.slice(1)) await expect.poll(() => editor.text()).toBe('First, edited.\n\nTyped: Second.');

    // A worker killed is started again in its place; the editors it held connect again, and an edit
    // made after reaches all four.
    const [victim] = childrenOf(server.pid);
    execFileSync('kill', ['-9', String(victim)]);
    await expect.poll(() => childrenOf(server.pid).filter((pid) => pid !== victim), { timeout: 20_000, interval: 200 }).toHaveLength(2);
    const opened = await rest(server, agent.key, 'open_pad', { pad_id: padId, mode: 'full' });
    const after = await rest(server, agent.key, 'edit_pad', { pad_id: padId, base_version: opened.body.data.version, edits: [{ block_id: first!.id, text: 'First, after the kill.' }] });
    expect(after.status, after.text).toBe(200);
    for (const editor of editors) await expect.poll(() => editor.text(), { timeout: 20_000 }).toBe('First, after the kill.\n\nTyped: Second.');
  });

  it('refuses more than one worker on the embedded store, or without Redis, saying what to set', () => {
    const run = (env: Record<string, string>) => {
      const clean: Record<string, string | undefined> = { ...process.env };
      for (const name of ['DATABASE_URL', 'REDIS_URL', 'SVC_DATA_DIR', 'WORKERS']) delete clean[name];
      return spawnSync(process.execPath, ['api/main.ts'], { env: { ...clean, SVC_DATA_DIR: 'memory://', PORT: '0', ...env }, encoding: 'utf8', timeout: 30_000 });
    };
    const embedded = run({ WORKERS: '2' });
    expect(embedded.status).not.toBe(0);
    expect(embedded.stderr).toContain('WORKERS: 2 processes need DATABASE_URL (Postgres) and REDIS_URL');
    const noRedis = run({ WORKERS: '2', DATABASE_URL: databaseUrl! });
    expect(noRedis.status).not.toBe(0);
    expect(noRedis.stderr).toContain('WORKERS: 2 processes need REDIS_URL');
  });
});

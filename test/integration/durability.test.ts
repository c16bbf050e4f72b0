// @module-tag heavy
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { durableStore, openProvider, registerAgent, rest, startTestServer, stores, typeInto, type Store } from '../support/server.ts';

const serveScript = fileURLToPath(new URL('../support/serve.ts', import.meta.url));

/** The server in its own process, so a test can SIGKILL it; killed when the test ends, should the test fail first. */
async function startChild(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [serveScript], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'silent', SVC_GUEST_AGENTS: '1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /READY (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before it was ready`)));
  });
  return { url, child };
}

async function setUp(server: { url: string }) {
  const agent = await registerAgent(server as never, 'Durable Bot');
  const hub = await rest(server as never, agent.key, 'create_hub', { name: 'Durable' });
  const pad = await rest(server as never, agent.key, 'create_pad', { hub: hub.body.data.slug, title: 'Log', text: 'One.\n\nTwo.' });
  return { key: agent.key, padId: pad.body.data.pad_id as string };
}

/** Every acknowledged edit survives a restart, a SIGTERM and a SIGKILL, on both stores. */
describe.each(stores())('durability on %s', (store: Store) => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it('a restart on the same store keeps acknowledged edits and live typing', async () => {
    const durable = await durableStore(store);
    drops.push(durable.drop);
    const first = await startTestServer(store, durable.env);
    const { key, padId } = await setUp(first);
    const full = await rest(first, key, 'open_pad', { pad_id: padId, mode: 'full' });
    const [one, two] = full.body.data.blocks as string[];
    const edit = await rest(first, key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: two!, text: 'Two, edited.' }] });
    expect(edit.status).toBe(200);
    const live = await openProvider(first, padId, key);
    await live.synced;
    typeInto(live.document, live.fragment, one!, 0, 'Typed: ');
    await expect.poll(async () => (await first.core.sync.read(padId))[0]!.text).toBe('Typed: One.');
    live.close();
    await first.close();

    const second = await startTestServer(store, durable.env);
    const after = await rest(second, key, 'open_pad', { pad_id: padId, mode: 'full' });
    expect(after.body.text).toContain('~~~markdown\nTyped: One.\n\nTwo, edited.\n~~~');
    expect(after.body.data.version).toBeGreaterThanOrEqual(3);
    await second.close();
  });

  it('SIGKILL right after an acknowledged edit_pad loses nothing', async () => {
    const durable = await durableStore(store);
    drops.push(durable.drop);
    const { url, child } = await startChild(durable.env);
    const server = { url };
    const { key, padId } = await setUp(server);
    const full = await rest(server as never, key, 'open_pad', { pad_id: padId, mode: 'full' });
    const [, two] = full.body.data.blocks as string[];
    const edit = await rest(server as never, key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: two!, text: 'Acknowledged.' }] });
    expect(edit.status).toBe(200);
    child.kill('SIGKILL');
    await once(child, 'exit');

    const restarted = await startTestServer(store, durable.env);
    const after = await rest(restarted, key, 'open_pad', { pad_id: padId, mode: 'full' });
    expect(after.body.data.version).toBe(2);
    expect(after.body.text).toContain('~~~markdown\nOne.\n\nAcknowledged.\n~~~');
    await restarted.close();
  });

  it('SIGTERM flushes live typing before the process ends', async () => {
    const durable = await durableStore(store);
    drops.push(durable.drop);
    const { url, child } = await startChild(durable.env);
    const server = { url };
    const { key, padId } = await setUp(server);
    const live = await openProvider(server, padId, key);
    await live.synced;
    typeInto(live.document, live.fragment, live.blocks()[0]!.id, 0, 'Last words: ');
    // Once another client sees the typing the server has it in memory; saving it is SIGTERM's job.
    const watcher = await openProvider(server, padId, key);
    await expect.poll(() => watcher.text()).toContain('Last words: One.');
    child.kill('SIGTERM');
    await once(child, 'exit');
    live.close();
    watcher.close();

    const restarted = await startTestServer(store, durable.env);
    const after = await rest(restarted, key, 'open_pad', { pad_id: padId, mode: 'full' });
    expect(after.body.text).toContain('Last words: One.');
    await restarted.close();
  });
});

/** Two instances on one Postgres database: each appends to the log, neither overwrites the other. */
describe.runIf(stores().includes('postgres'))('two instances on postgres', () => {
  it('edits made through different instances all survive', async () => {
    const durable = await durableStore('postgres');
    const a = await startTestServer('postgres', durable.env);
    const b = await startTestServer('postgres', durable.env);
    try {
      const { key, padId } = await setUp(a);
      const blocks = (await rest(a, key, 'open_pad', { pad_id: padId, mode: 'full' })).body.data.blocks as string[];
      // Both instances have the pad loaded before either edits it.
      await rest(b, key, 'open_pad', { pad_id: padId, mode: 'full' });
      expect((await rest(a, key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: blocks[0]!, text: 'One, via A.' }] })).status).toBe(200);
      expect((await rest(b, key, 'edit_pad', { pad_id: padId, base_version: 1, edits: [{ block_id: blocks[1]!, text: 'Two, via B.' }] })).status).toBe(200);
      // A last wrote version 2 and does not know of B's version 3: its commit finds the pad moved
      // on, catches its live copy up with the database, and applies the change again on version 3.
      const third = await rest(a, key, 'edit_pad', { pad_id: padId, base_version: 1, inserts: [{ after: blocks[1]!, text: 'Three, via A.' }] });
      expect(third.status).toBe(200);
      expect(third.body.data).toMatchObject({ version: 4, conflicts: [] });
      const onA = await rest(a, key, 'open_pad', { pad_id: padId, mode: 'full' });
      expect(onA.body.text).toContain('~~~markdown\nOne, via A.\n\nTwo, via B.\n\nThree, via A.\n~~~');
      // B writes version 5; then someone types on A, which last recorded version 4.
      expect((await rest(b, key, 'edit_pad', { pad_id: padId, base_version: 4, edits: [{ block_id: blocks[0]!, text: 'One, via B.' }] })).status).toBe(200);
      const typist = await openProvider(a, padId, key);
      await typist.synced;
      typeInto(typist.document, typist.fragment, blocks[1]!, 0, 'Typed on A. ');
      await expect.poll(async () => (await a.core.sync.read(padId)).map((block) => block.text)).toContain('Typed on A. Two, via B.');
      // An edit on A right away: the typing's version, written ahead on version 4, is refused; A
      // catches up, versions the typing as 6 and applies the edit as 7.
      const fourth = await rest(a, key, 'edit_pad', { pad_id: padId, base_version: 4, inserts: [{ after: 'start', text: 'Zero, via A.' }] });
      expect(fourth.body, JSON.stringify(fourth.body)).toMatchObject({ data: { version: 7, conflicts: [] } });
      const typing = await rest(a, key, 'open_pad', { pad_id: padId, mode: 'changes', since: 5 });
      expect(typing.body.data.changes).toEqual(expect.arrayContaining([{ block_id: blocks[1]!, change: 'changed' }]));
      await a.core.sync.flush();
      typist.close();
      await a.close();
      await b.close();
      const c = await startTestServer('postgres', durable.env);
      const after = await rest(c, key, 'open_pad', { pad_id: padId, mode: 'full' });
      // A never loaded B's last edit into its live copy: "One, via A." there and "One, via B." in the
      // log merge as the CRDT merges them, and nothing either instance wrote is lost.
      expect(after.body.text).toContain('~~~markdown\nZero, via A.\n\n');
      expect(after.body.text).toContain('Typed on A. Two, via B.\n\nThree, via A.\n~~~');
      expect(after.body.text).toContain('One, via B.');
      expect(after.body.data.version).toBe(7);
      await c.close();
    } finally {
      await a.close();
      await b.close();
      await durable.drop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { z } from 'zod';
import { padTextStopReason, padTextStopUntil } from '../../schema/pad.ts';
import { livePadText } from '../../server/core/limits/padTextLive.ts';
import { openProvider, poke, reconnect, registerAgent, rest, startTestServer, stores, typeInto, type TestServer } from '../support/server.ts';

const DAY = 24 * 3_600_000;
const Sum = z.object({ n: z.number().nullable() });

/**
 * Pad text typed live counts in the typist's daily window of pad text saved (SPEC part 8: 3,000,000
 * characters a day per participant), here at a scale that makes it 300, by the server's clock moved
 * through `core.pace.now`. Past it, the typist's live typing stops until the window frees room, and
 * they are told until when; others type on.
 */
describe.each(stores())('pad text typed live on %s', (store) => {
  let server: TestServer;
  // Half a minute into a minute: a window of amounts keeps its marks per minute, so the day's first mark is 30 s old.
  let now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
  let owner: { key: string; id: string };
  let ada: { key: string; id: string };
  let bea: { key: string; id: string };
  let reader: { key: string; id: string };
  let padId: string;
  const providers: { close(): void }[] = [];

  const connect = async (key: string) => {
    const client = await openProvider(server, padId, key);
    providers.push(client);
    await client.synced;
    return client;
  };
  /** What the participant's `ps:` window holds. */
  const counted = (id: string) => server.core.db.pool.oneFirst(sql.type(Sum)`SELECT sum(weight)::int AS n FROM pace_marks WHERE key = ${`ps:${id}`}`);
  const serverText = async () => (await server.core.sync.read(padId)).map((block) => block.text).join('\n\n');
  /** Every reason the server gave a provider for closing its connection to the pad. */
  const reasonsOf = (client: Awaited<ReturnType<typeof connect>>) => {
    const reasons: string[] = [];
    client.provider.on('close', ({ event }: { event: { reason: string } }) => reasons.push(event.reason));
    return reasons;
  };
  beforeAll(async () => {
    server = await startTestServer(store);
    server.core.pace.now = () => now;
    owner = await registerAgent(server, 'Pad Owner');
    const hub = (await rest(server, owner.key, 'create_hub', { name: 'Typing Desk' })).body.data as { hub_id: string; slug: string };
    [ada, bea, reader] = [await registerAgent(server, 'Ada'), await registerAgent(server, 'Bea'), await registerAgent(server, 'Reader')];
    for (const agent of [ada, bea, reader]) {
      await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.hub_id}, ${agent.id}, 'member')`);
    }
    const made = await rest(server, owner.key, 'create_pad', { hub: hub.slug, title: 'Long day', text: 'Ada writes here.\n\nBea writes here.' });
    expect(made.status).toBe(200);
    padId = made.body.data.pad_id;
    // 3,000,000 × 0.0001: 300 characters a day (and one tool read a minute per agent).
    server.core.pace.scale = 0.0001;
  });
  afterAll(async () => {
    for (const client of providers) client.close();
    await server?.close();
  });

  it('counts what is typed, stops the typist past the day, lets others type, and types again a day later', async () => {
    const typist = await connect(ada.key);
    const told = reasonsOf(typist);
    const [adaBlock, beaBlock] = typist.blocks();

    // 200 characters: counted, under the max; typing goes on.
    typeInto(typist.document, typist.fragment, adaBlock!.id, 'end', ' ' + 'a'.repeat(199));
    await expect.poll(serverText).toContain('a'.repeat(199));
    await server.core.sync.flush();
    expect(await counted(ada.id)).toBe(200);
    expect(told).toEqual([]);

    // 150 more pass 300: they are in the pad already and counted; then Ada is stopped and told until when.
    typeInto(typist.document, typist.fragment, adaBlock!.id, 'end', 'b'.repeat(150));
    await expect.poll(serverText).toContain('b'.repeat(150));
    await server.core.sync.flush();
    expect(await counted(ada.id)).toBe(350);
    // The first minute's mark (30 s ago) leaves the day in a day less 30 s.
    const until = new Date(now + DAY - 30_000);
    await expect.poll(() => told).toEqual([padTextStopReason(until)]);
    expect(padTextStopUntil(told[0]!)?.toISOString()).toBe(until.toISOString());

    // A new connection of hers reads, but what she types there is refused with the same reason.
    const again = await connect(ada.key);
    const toldAgain = reasonsOf(again);
    expect(again.text()).toContain('b'.repeat(150));
    typeInto(again.document, again.fragment, adaBlock!.id, 'end', ' refused words');
    await expect.poll(() => toldAgain).toEqual([padTextStopReason(until)]);

    // Bea types on (her own window), and another provider sees her text but never Ada's refused words.
    const other = await connect(bea.key);
    typeInto(other.document, other.fragment, beaBlock!.id, 'end', ' Bea goes on.');
    await expect.poll(serverText).toContain('Bea goes on.');
    const watcher = await connect(owner.key);
    expect(watcher.text()).toContain('Bea goes on.');
    expect(watcher.text()).not.toContain('refused words');
    const read = await rest(server, reader.key, 'open_pad', { pad_id: padId, mode: 'full' });
    expect(read.status).toBe(200);
    expect(read.body.text).toContain('Bea goes on.');
    expect(read.body.text).not.toContain('refused words');
    await server.core.sync.flush();
    expect(await counted(ada.id)).toBe(350);
    expect(await counted(bea.id)).toBe(' Bea goes on.'.length);

    // A day later the window is empty: Ada connects again, and what her page kept is saved and counted.
    now += DAY;
    await reconnect(again.provider);
    await expect.poll(serverText).toContain('refused words');
    await expect.poll(() => watcher.text()).toContain('refused words');
    typeInto(again.document, again.fragment, adaBlock!.id, 'end', ' And more.');
    await expect.poll(serverText).toContain('refused words And more.');
    await server.core.sync.flush();
    const day = await server.core.db.pool.oneFirst(sql.type(Sum)`SELECT sum(weight)::int AS n FROM pace_marks WHERE key = ${`ps:${ada.id}`} AND at > ${now - DAY}`);
    expect(day).toBe(' refused words And more.'.length);
    expect(toldAgain.filter((reason) => padTextStopUntil(reason))).toHaveLength(1);
  });

  it('counts every typist of a count at once, each in their own window, and names only those now past it', async () => {
    const [cy, dee] = [await registerAgent(server, 'Cy'), await registerAgent(server, 'Dee')];
    // Cy's first 250 characters are marked in this minute, his next 60 in the next.
    const pace = livePadText(server.core);
    expect(await pace.count(new Map([[cy.id, 250]]))).toEqual(new Map());
    now += 60_000;
    const stopped = await pace.count(new Map([[cy.id, 60], [dee.id, 290]]));
    expect(await counted(cy.id)).toBe(310);
    expect(await counted(dee.id)).toBe(290);
    // Cy is past 300 until the minute of his first 250 leaves the day; Dee is within hers.
    expect([...stopped.keys()]).toEqual([cy.id]);
    expect(stopped.get(cy.id)).toBe(Math.floor((now - 60_000) / 60_000) * 60_000 + DAY);
  });
});

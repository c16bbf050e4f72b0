import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'slonik';
import { poke, registerAgent, request, rest, signIn, startTestServer, stores, type Reply, type TestServer } from '../support/server.ts';

/**
 * Handles and slugs are unique, and picked from a name: people, agents and guests arriving at the
 * same moment under one name, and hubs made at once under one name, each get one of their own, never
 * a 500 (a concurrent insert took the first pick). The calls go through the real doors, all at once.
 */
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const expectAll = (replies: Reply[], status: number) => {
  for (const reply of replies) expect(reply.status, reply.text).toBe(status);
};
const distinct = (values: string[]) => expect(new Set(values.map((v) => v.toLowerCase())).size).toBe(values.length);

describe.each(stores())('names picked at the same moment on %s', (store) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(store, { SVC_PUBLIC_THREADS: '1' });
  });
  afterAll(() => server?.close());

  const signInForm = (name: string, email: string) => post(`${server.url}/signin`, { name, email }, { 'x-svc': '1' });

  it('gives people signing up under one name at once a handle each, and one address one person', async () => {
    const people = await Promise.all(Array.from({ length: 6 }, (_, i) => signInForm('Sam Same', `sam-${i}@example.test`)));
    expectAll(people, 200);
    distinct(people.map((reply) => reply.body.participant.handle));
    const twice = await Promise.all(Array.from({ length: 4 }, () => signInForm('Twice Over', 'twice@example.test')));
    expectAll(twice, 200);
    expect(new Set(twice.map((reply) => reply.body.participant.id)).size).toBe(1);
  });

  it('gives agents and guests arriving under one name at once, by every door, a handle each', async () => {
    const human = await signIn(server, 'Hub Keeper', 'keeper@example.test');
    const hubs: string[] = [];
    for (const name of ['Square one', 'Square two', 'Square three', 'Square four']) {
      const made = await request(`${server.url}/api/tools/create_hub`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc': '1', cookie: human.cookie },
        body: JSON.stringify({ name }),
      });
      // Public and taking guests, as a guest's jump-in and a keyless thread need.
      await poke(server, sql.unsafe`UPDATE hubs SET audience = 'public', accepts_guests = true WHERE id = ${made.body.data.hub_id}`);
      hubs.push(made.body.data.slug);
    }
    const name = 'Robin Twin';
    const replies = await Promise.all([
      // Agents registering themselves, and one its person adds under Settings.
      ...Array.from({ length: 4 }, () => post(`${server.url}/api/v1/agents/register`, { name })),
      post(`${server.url}/api/settings/create-agent`, { name }, { cookie: human.cookie, 'x-svc': '1', origin: server.url }),
      // Guests jumping into three public hubs (a name is held once per hub), and an agent's keyless first thread in a fourth.
      ...hubs.slice(0, 3).map((hub) => post(`${server.url}/api/jump-in`, { hub, name })),
      post(`${server.url}/api/v1/tools/start_thread`, { hub: hubs[3], title: 'Hello', body: 'First words.', name }),
      // A person signing up under the same name.
      signInForm(name, 'robin@example.test'),
    ]);
    for (const reply of replies) expect(reply.status, reply.text).toBeLessThan(300);
    const handles = replies.map((reply) => (reply.body.agent ?? reply.body.participant).handle as string);
    expect(handles.every((handle) => handle.startsWith('@robin-twin'))).toBe(true);
    distinct(handles);
  });

  it('gives hubs made at once under one name a slug each', async () => {
    const maker = await registerAgent(server, 'Hub Maker');
    const made = await Promise.all(Array.from({ length: 6 }, () => rest(server, maker.key, 'create_hub', { name: 'Same Hub' })));
    expectAll(made, 200);
    distinct(made.map((reply) => reply.body.data.slug));
  });
});

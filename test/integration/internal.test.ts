import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poke, registerAgent, request, rest, startTestServer, stores, type TestServer } from '../support/server.ts';

const CRON_SECRET = 'cron-secret-for-the-tests-0123456789';

/** Scheduled work behind `Authorization: Bearer <CRON_SECRET>`: the timed rules and the pad flush. */
describe.each(stores())('scheduled work on %s', (store) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(store, { CRON_SECRET });
  });
  afterAll(() => server?.close());

  const get = (path: string, secret?: string) => request(`${server.url}${path}`, secret ? { headers: { authorization: `Bearer ${secret}` } } : {});

  it('answers 401 without the secret or with another', async () => {
    for (const path of ['/internal/prune', '/internal/flush']) {
      for (const secret of [undefined, 'wrong-secret-of-the-same-length-0123']) {
        const reply = await get(path, secret);
        expect(reply.status, `${path} ${secret ?? 'none'}`).toBe(401);
        expect(reply.body.error).toBe('unauthenticated');
      }
    }
  });

  it('prune opens again a task held 48 hours without progress, and a second run changes nothing', async () => {
    const owner = await registerAgent(server, 'Planner');
    const worker = await registerAgent(server, 'Worker');
    const hub = await rest(server, owner.key, 'create_hub', { name: 'Scheduled' });
    await poke(server, sql.unsafe`INSERT INTO hub_members (hub_id, participant_id, role) VALUES (${hub.body.data.hub_id}, ${worker.id}, 'member')`);
    const thread = await rest(server, owner.key, 'start_thread', { hub: hub.body.data.slug, title: 'Work', body: 'To do.' });
    const task = await rest(server, owner.key, 'create_task', { thread_id: thread.body.data.thread_id, title: 'Slow', assignee: worker.id });
    const taskId = task.body.data.task_id as string;
    expect((await rest(server, worker.key, 'take_task', { task_id: taskId })).status).toBe(200);
    await poke(server, sql.unsafe`UPDATE tasks SET progress_at = now() - interval '49 hours' WHERE id = ${taskId}`);

    const pruned = await get('/internal/prune', CRON_SECRET);
    expect(pruned.status).toBe(200);
    expect(pruned.body).toEqual({ tasks_reopened: 1 });
    expect((await get('/internal/prune', CRON_SECRET)).body).toEqual({ tasks_reopened: 0 });
    const listed = await rest(server, owner.key, 'list_tasks', { in: thread.body.data.thread_id });
    expect(listed.body.data.tasks).toEqual([expect.objectContaining({ task_id: taskId, state: 'open' })]);
  });

  it('flush writes what live pads hold', async () => {
    const reply = await get('/internal/flush', CRON_SECRET);
    expect([reply.status, reply.body]).toEqual([200, { flushed: true }]);
  });
});
